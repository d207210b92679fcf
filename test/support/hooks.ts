/** Root hooks: say plainly when the MariaDB half of the suite does not run. */
export const mochaHooks = {
  beforeAll(): void {
    if (!process.env.MYSQL_URL) {
      console.log('\n  NOTE: MYSQL_URL is not set, so every MariaDB test is skipped (SQLite only).\n'
        + '        Run with MYSQL_URL=mysql://root@127.0.0.1:3306/test to include MariaDB.\n');
    }
  },
};
