/**
 * `memory.db`: one SQLite file (`node:sqlite`: no FFI, works under narrow rights and in `deno compile`) for the
 * memory's rows — layer-2 documents and the layer-3 graph — with a versioned schema migrated forward in transactions.
 *
 * @module
 */

import { DatabaseSync } from "node:sqlite";
import { storageFault } from "../fs/store_health.ts";
import { useWal } from "../sqlite/durability.ts";
import { prepared } from "../sqlite/prepared.ts";
import { ensureGraphReadIndexes } from "./graph/entity_names.ts";
import { fileNames } from "./graph/synonyms.ts";

/** The schema version this homed writes. */
export const SCHEMA_VERSION = 10;

/**
 * The columns of `table` that `db` has not got yet, added (a migration that finds a column already there leaves it):
 * a database rebuilt by hand, or one a test shaped as an older schema, keeps what it holds.
 */
function addMissingColumns(db: DatabaseSync, table: string, columns: Record<string, string>): void {
  const have = new Set(
    (prepared(db, "SELECT name FROM pragma_table_info(?)").all(table) as Array<{ name: string }>).map((c) => c.name),
  );
  for (const [name, definition] of Object.entries(columns)) {
    if (!have.has(name)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${name} ${definition}`);
  }
}

const MIGRATIONS: Record<number, string | ((db: DatabaseSync) => void)> = {
  1: `CREATE TABLE IF NOT EXISTS documents (
        id TEXT PRIMARY KEY, text TEXT NOT NULL, summary TEXT NOT NULL, created INTEGER NOT NULL,
        last_accessed INTEGER NOT NULL, hits INTEGER NOT NULL DEFAULT 0, provenance TEXT NOT NULL)`,
  2: `CREATE TABLE entities (
        id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL, aliases TEXT NOT NULL DEFAULT '[]',
        mentions INTEGER NOT NULL DEFAULT 0, first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL,
        UNIQUE (name, type));
      CREATE TABLE triples (
        id INTEGER PRIMARY KEY, subject INTEGER NOT NULL REFERENCES entities(id), predicate TEXT NOT NULL,
        object TEXT NOT NULL, provenance TEXT NOT NULL, valid_from INTEGER NOT NULL, valid_to INTEGER);
      CREATE INDEX triples_open ON triples (subject, predicate) WHERE valid_to IS NULL;`,
  3: `ALTER TABLE documents ADD COLUMN archived INTEGER NOT NULL DEFAULT 0;`,
  // The turn said just before the document's (same chat, shortly before): its context field in the index.
  4: `ALTER TABLE documents ADD COLUMN context TEXT NOT NULL DEFAULT '';
      ALTER TABLE documents ADD COLUMN context_event TEXT NOT NULL DEFAULT '';`,
  // The conversation a document belongs to (the first event of its run of turns): recall fuses its score in.
  5: `ALTER TABLE documents ADD COLUMN session TEXT NOT NULL DEFAULT '';`,
  // Who asked in the exchange and with which trust: a guest's recall holds only that guest's own documents. Documents
  // kept before this was recorded cannot say who asked, so they are the household's (never shown to a guest).
  6: `ALTER TABLE documents ADD COLUMN sender TEXT NOT NULL DEFAULT '';
      ALTER TABLE documents ADD COLUMN trust TEXT NOT NULL DEFAULT 'household';`,
  // Who corrected a fact by hand (the console's correct), on the fact the correction made; and an index for the facts
  // whose object names an entity (the neighbours of an entity).
  7: `ALTER TABLE triples ADD COLUMN corrected_by TEXT;
      CREATE INDEX triples_object ON triples (object);`,
  // Who said a fact and with which trust (the lowest trust among the lines it cites): a guest's claim never replaces
  // a household member's or the owner's fact. Facts recorded before this cannot say who said them: their speaker is
  // unknown ('') and they are the household's, as documents of schema 6 are — a guest cannot replace them.
  8: (db) =>
    addMissingColumns(db, "triples", {
      said_by: "TEXT NOT NULL DEFAULT ''",
      trust: "TEXT NOT NULL DEFAULT 'household'",
    }),
  // The synonym index (graph/synonyms.ts) in the file instead of the heap, where a year's 48,000 entities cost
  // ≈ 22 MB and a 0.8 s rebuild at every open: normalised keys of names and aliases, and the LSH buckets of the long
  // Latin ones (`bucket`: a 47-bit hash of type, band and signature). Filled here from the entities and their aliases,
  // in id order as the rebuild went (the last name filed with a key owns it), so an upgraded file has it at once.
  9: (db) => {
    db.exec(`CREATE TABLE IF NOT EXISTS synonym_keys (
        type TEXT NOT NULL, key TEXT NOT NULL, entity INTEGER NOT NULL, PRIMARY KEY (type, key)) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS synonym_buckets (
        bucket INTEGER NOT NULL, entity INTEGER NOT NULL, PRIMARY KEY (bucket, entity)) WITHOUT ROWID;`);
    const rows = prepared(db, "SELECT id, name, type, aliases FROM entities ORDER BY id").iterate() as Iterable<
      { id: number; name: string; type: string; aliases: string }
    >;
    fileNames(
      db,
      (function* () {
        for (const { id, name, type, aliases } of rows) {
          yield { id, name, type };
          for (const alias of JSON.parse(aliases) as string[]) yield { id, name: alias, type };
        }
      })(),
    );
  },
  // Where things were said (issue 34.4: each person reads only what is theirs, `identity/visibility.ts`): a
  // document's channel, and the chats a fact was learnt in (`heard`: a JSON list of {source, sender, trust}, one per
  // reader class). Rows from before cannot say: their source is '' and their `heard` empty — the household's, as
  // schema 6 and 8 count them — so nothing older becomes anyone's private.
  10: (db) => {
    addMissingColumns(db, "documents", { source: "TEXT NOT NULL DEFAULT ''" });
    addMissingColumns(db, "triples", { heard: "TEXT NOT NULL DEFAULT '[]'" });
  },
};

/**
 * Indexes of reads that run on every memory job, made at open when missing. Derived from the rows, so no schema
 * version: an older homed opens the file as before (and SQLite keeps them current for it too). Without them each run
 * read every entity and every document kept, the whole year's, for a handful of new lines.
 */
const JOB_INDEXES = [
  // The system message's graph index: the most mentioned entities, in `GraphReader.index`'s order.
  "CREATE INDEX IF NOT EXISTS entities_mentioned ON entities (mentions DESC, last_seen DESC, name)",
  // The documents not archived yet — all that `DocumentStore.archiveCold` looks at, not every document ever kept.
  "CREATE INDEX IF NOT EXISTS documents_live ON documents (last_accessed) WHERE archived = 0",
];

/**
 * A value kept in the `meta` table (e.g. how far the distiller got), or `undefined`.
 *
 * @example
 * ```ts
 * const db = openMemoryDb(":memory:");
 * writeMeta(db, "distilled_upto", "120");
 * readMeta(db, "distilled_upto"); // "120"
 * readMeta(db, "no_such_key"); // undefined
 * ```
 */
export function readMeta(db: DatabaseSync, key: string): string | undefined {
  return (prepared(db, "SELECT value FROM meta WHERE key = ?").get(key) as { value?: string } | undefined)?.value;
}

/** Sets a `meta` value (inside the caller's transaction, if any). */
export function writeMeta(db: DatabaseSync, key: string, value: string): void {
  prepared(db, "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)").run(key, value);
}

/**
 * Runs `work` in one transaction: committed when it returns, rolled back when it throws.
 *
 * @example
 * ```ts
 * const db = openMemoryDb(":memory:");
 * transaction(db, () => {
 *   db.prepare("UPDATE documents SET archived = 1 WHERE last_accessed < ?").run(Date.now() - 72 * 3_600_000);
 *   writeMeta(db, "distilled_upto", "160");
 * });
 * ```
 */
export function transaction<T>(db: DatabaseSync, work: () => T): T {
  db.exec("BEGIN IMMEDIATE");
  try {
    const result = work();
    db.exec("COMMIT");
    return result;
  } catch (error) {
    db.exec("ROLLBACK");
    throw error;
  }
}

/** WAL pages at which SQLite checkpoints by itself (40 MB): only a burst between two heartbeats gets there. */
const WAL_SAFETY_PAGES = 10_000;
/** Bytes of the WAL file kept once it has been folded in (SQLite's `journal_size_limit`). */
const WAL_KEPT_BYTES = 4 * 1024 * 1024;

/**
 * Folds memory.db's write-ahead log into the database file as far as no reader holds it back (SQLite's passive
 * checkpoint), which {@link openMemoryDb} left to the heartbeat; the log then starts over from its beginning, cut back
 * to 4 MB. Returns the pages copied.
 *
 * @example
 * ```ts
 * const db = openMemoryDb(":memory:");
 * checkpointMemoryDb(db); // 0
 * ```
 */
export function checkpointMemoryDb(db: DatabaseSync): number {
  const row = prepared(db, "PRAGMA wal_checkpoint(PASSIVE)").get() as { checkpointed?: number } | undefined;
  return Math.max(0, row?.checkpointed ?? 0);
}

/**
 * Opens `path`, migrating its schema to {@link SCHEMA_VERSION}; a newer schema (written by a newer homed) is refused
 * with a `RangeError` naming both versions, never touched.
 *
 * @example
 * ```ts
 * import { join } from "node:path";
 *
 * const dataDir = "/var/lib/homed"; // daemon.data_dir
 * const db = openMemoryDb(join(dataDir, "memory", "memory.db"));
 * ```
 */
export function openMemoryDb(path: string): DatabaseSync {
  const db = new DatabaseSync(path);
  // Derived rows and chat history mostly: NORMAL. The writes a person is told of (a correction, a forgetting) commit
  // through durably() (src/sqlite/durability.ts), fsync'd before the reply.
  useWal(db, "derived");
  db.exec("PRAGMA foreign_keys = ON");
  // Checkpoints on the heartbeat ({@link checkpointMemoryDb}), between turns: SQLite's own, every 1,000 WAL pages, ran
  // inside whichever turn's commit crossed the mark, copying pages and syncing the file — 30–40 ms of that turn, once
  // every few hundred turns. Its threshold stays as a safety net for a bulk write between two heartbeats (a memory job
  // distilling a long backlog), and the log file is cut back once folded in, so such a burst does not keep its size.
  db.exec(`PRAGMA wal_autocheckpoint = ${WAL_SAFETY_PAGES}`);
  db.exec(`PRAGMA journal_size_limit = ${WAL_KEPT_BYTES}`);
  // 256 KiB of page cache instead of SQLite's 2 MiB: a turn reads a few rows by id, the OS caches the file anyway,
  // and the start-up scan of every id would otherwise keep 2 MiB resident (docs/PERFORMANCE.md, start-up).
  db.exec("PRAGMA cache_size = -256");
  db.exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  const row = prepared(db, "SELECT value FROM meta WHERE key = 'schema'").get() as { value?: string } | undefined;
  // Databases from before the shared schema key recorded only the documents table.
  const legacy = prepared(db, "SELECT value FROM meta WHERE key = 'documents_schema'").get() as
    | { value?: string }
    | undefined;
  const version = Number(row?.value ?? legacy?.value ?? 0);
  if (version > SCHEMA_VERSION) {
    db.close();
    throw new RangeError(
      `${path} has memory schema ${version}; this homed knows up to ${SCHEMA_VERSION} — upgrade homed`,
    );
  }
  for (let next = version + 1; next <= SCHEMA_VERSION; next++) {
    transaction(db, () => {
      const migration = MIGRATIONS[next]!;
      if (typeof migration === "string") db.exec(migration);
      else migration(db);
      prepared(db, "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema', ?)").run(String(next));
    });
  }
  for (const index of JOB_INDEXES) {
    try {
      db.exec(index);
    } catch (error) {
      // A full or read-only disk at the first open after an upgrade: memory opens all the same (its jobs scan until a
      // later open makes the index).
      if (!storageFault(error)) throw error;
    }
  }
  // The graph's reads by name and by speaker (people's profiles, the console): index reads, not every fact's.
  ensureGraphReadIndexes(db);
  return db;
}
