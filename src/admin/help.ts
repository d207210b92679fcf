/** What `reso-server --help` and `reso-server <command> --help` print. */

export const MAIN_HELP = `Usage: reso-server <command> [options]      (reso-server <command> --help for its options)

Commands:
  serve        Start the OData service at http://localhost:$PORT/odata, on every core
  seed         Write deterministic demo listings and everything that hangs off them
  ingest       Upsert records of one resource from an NDJSON file
  clients      Manage API clients: add, list, show, scope, revoke, rotate
  webhooks     Push each client's EntityEvents to its consumer's URL: add, list, remove, resume
  usage        Transactions by client, period and class (A: fetch by key, B: query)
  generate     Regenerate generated/ from the CSDL data dictionary

Options:
  -h, --help     this help
  -v, --version  the version

Environment: PORT, DATABASE_URL (sqlite:<path>, default sqlite:data/reso.sqlite, or
mysql://user:pass@host:3306/db; the MariaDB database must exist), PAGE_SIZE, MAX_PAGE_SIZE,
WORKERS, SHUTDOWN_TIMEOUT_MS, DEMO_TOKEN, SEED_LISTINGS, … (README "Configuration").
Exit codes: 0 done, 1 failure, 2 usage or configuration, 3 database, 4 port, 5 bad input lines.`;

export const SERVE_HELP = `Usage: reso-server serve [--workers N]

Serves the OData service at http://localhost:$PORT/odata, configured by environment (README
"Configuration"). On an empty database it first writes $SEED_LISTINGS demo listings.

Options:
  --workers N   server processes (default: $WORKERS, else one per core; 1: no cluster).
                SIGHUP replaces them one at a time; SIGTERM or SIGINT drain requests in
                progress for up to $SHUTDOWN_TIMEOUT_MS, then exit 0.
  -h, --help    this help`;

export const SEED_HELP = `Usage: reso-server seed --listings N [--seed S]

Writes N deterministic demo listings with their offices, members, media, open houses, history,
rooms and units into $DATABASE_URL (the same N and S give the same records). Progress on stderr.

Options:
  --listings N  listings to write (required)
  --seed S      random seed (default 1)
  -h, --help    this help`;

export const INGEST_HELP = `Usage: reso-server ingest <Resource> <file.ndjson> [--on-error skip|reject] [--json]

Upserts records by key, one JSON object per line; {"<Key>": "…", "@delete": true} deletes (a
listing is marked deleted, as the dictionary says). The service keeps the timestamps. Progress on
stderr. Exit code 5 when any line was bad.

Options:
  --on-error skip    report bad lines by number and write the others (default)
  --on-error reject  check the whole file first; write nothing if any line is bad
  --json             print the summary as JSON
  -h, --help         this help`;

export const CLIENTS_HELP = `Usage:
  reso-server clients add --name <name> [--id <id>] [--scope "<OData filter on the listings>"]
                          [--hide <field>,<Set>.<field>] [--rate <requests/minute>] [--admin] [--static-token]
  reso-server clients list [--json]
  reso-server clients show <id> [--json]
  reso-server clients scope <id> [--scope "<OData filter on the listings>"]   (no --scope: all listings)
  reso-server clients revoke <id>
  reso-server clients rotate <id>

API clients use OAuth2 client credentials: POST the id and secret to /oauth2/token for a bearer
token (clients add prints the command). revoke and rotate take effect on running servers within seconds.`;

export const USAGE_HELP = `Usage: reso-server usage [--client <id>] [--from <date>] [--to <date>] [--by hour|day|month] [--json|--csv]

Transactions by client, UTC period and class (A: fetch by key, B: query), with the client's name.

Options:
  --client <id>   one client only
  --from <date>   from this UTC date (YYYY-MM-DD) or hour (YYYY-MM-DDTHH), inclusive
  --to <date>     to this UTC date or hour, inclusive (a date: to its last hour)
  --by <period>   hour (default), day or month
  --json          the usage table's rows (per hour) as JSON
  --csv           the periods as CSV
  -h, --help      this help`;
