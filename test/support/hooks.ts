/** Root hooks: say plainly when the MariaDB or Galera half of the suite does not run; stop the Galera cluster at the end. */
import { GALERA, galeraCluster, stopGaleraCluster } from './galera';

export const mochaHooks = {
  async beforeAll(this: Mocha.Context): Promise<void> {
    if (!process.env.MYSQL_URL) {
      console.log('\n  NOTE: MYSQL_URL is not set, so every MariaDB test is skipped (SQLite only).\n'
        + '        Run with MYSQL_URL=mysql://root@127.0.0.1:3306/test to include MariaDB.\n');
    }
    if (!GALERA) {
      console.log('  NOTE: GALERA is not set, so the Galera cluster tests are skipped. Run with GALERA=1 to include them.\n');
      return;
    }
    // Started here, once, so that no suite's own time limit has to cover the cluster's start (15–60 s).
    this.timeout(240_000);
    const started = Date.now();
    await galeraCluster();
    console.log(`  Galera: 3 nodes synced in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  },
  async afterAll(): Promise<void> {
    await stopGaleraCluster();
  },
};
