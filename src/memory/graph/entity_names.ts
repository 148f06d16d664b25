/**
 * Derived structures that let the graph's reads by name and by speaker use an index instead of reading every fact:
 * made at open when missing ({@link ensureGraphReadIndexes}), never a schema version — an older homed opens the file as
 * before, and SQLite keeps them current for its writes too (an index is SQLite's; the alias table is kept by triggers
 * stored in the file, not by this homed's code).
 *
 * - `entity_aliases`: every alias of every entity, one row each. A read by name matched each entity's aliases with
 *   `json_each`, parsing the aliases of all 48,000 entities of a household's year (≈ 20 ms per read); now it is one
 *   lookup in this table and one in the names' index. The triggers on `entities` follow every write of `aliases` —
 *   the synonym merge that files a new alias, an entity deleted by a correction's or a forgetting's clean-up, or by
 *   an older homed — so the table never lags the column it is derived from.
 * - `triples_subject`: every fact of an entity, holding or closed (`GraphReader.facts` shows the history too;
 *   `triples_open` indexes only the holding ones). It also serves the foreign key check when an entity is deleted,
 *   which read every fact once per deleted entity.
 * - `triples_speakers`: who said facts not a guest's, walked speaker by speaker (`GraphReader.speakers`): a few
 *   index seeks for a household's handful of speakers instead of grouping all 54,000 facts of a year.
 *
 * Fail-soft: on a full or read-only disk memory opens without them, and the reads fall back to the scans
 * ({@link hasEntityAliases}); a later open makes them.
 *
 * @module
 */

import type { DatabaseSync } from "node:sqlite";
import { storageFault } from "../../fs/store_health.ts";
import { prepared } from "../../sqlite/prepared.ts";

/** Indexes of the graph's reads by entity and by speaker (see the module's comment). */
const GRAPH_READ_INDEXES: readonly string[] = [
  "CREATE INDEX IF NOT EXISTS triples_subject ON triples (subject)",
  `CREATE INDEX IF NOT EXISTS triples_speakers ON triples (said_by, trust)
     WHERE said_by != '' AND trust IN ('owner', 'household')`,
];

// An entity's aliases as json_each reads them; a malformed list counts as none, so a hand-edited row never makes a
// write of the graph fail in a trigger.
const aliasesOf = (column: string) => `json_each(CASE WHEN json_valid(${column}) THEN ${column} ELSE '[]' END)`;

/**
 * The alias table, its triggers and its first filling: one transaction, so the table exists only complete and kept
 * (triggers left by a table dropped by hand are made again). `alias` has no declared type, so it holds each alias exactly as `json_each` gives it (what the scan compared with).
 */
const ENTITY_ALIASES = `
  DROP TRIGGER IF EXISTS entity_aliases_insert;
  DROP TRIGGER IF EXISTS entity_aliases_update;
  DROP TRIGGER IF EXISTS entity_aliases_delete;
  CREATE TABLE entity_aliases (alias NOT NULL, entity INTEGER NOT NULL, PRIMARY KEY (alias, entity)) WITHOUT ROWID;
  CREATE INDEX entity_aliases_entity ON entity_aliases (entity);
  INSERT OR IGNORE INTO entity_aliases (alias, entity)
    SELECT a.value, e.id FROM entities e, ${aliasesOf("e.aliases")} a WHERE a.type = 'text';
  CREATE TRIGGER entity_aliases_insert AFTER INSERT ON entities BEGIN
    INSERT OR IGNORE INTO entity_aliases (alias, entity)
      SELECT value, NEW.id FROM ${aliasesOf("NEW.aliases")} WHERE type = 'text';
  END;
  CREATE TRIGGER entity_aliases_update AFTER UPDATE OF id, aliases ON entities BEGIN
    DELETE FROM entity_aliases WHERE entity = OLD.id;
    INSERT OR IGNORE INTO entity_aliases (alias, entity)
      SELECT value, NEW.id FROM ${aliasesOf("NEW.aliases")} WHERE type = 'text';
  END;
  CREATE TRIGGER entity_aliases_delete AFTER DELETE ON entities BEGIN
    DELETE FROM entity_aliases WHERE entity = OLD.id;
  END;`;

/**
 * Whether `db` has the alias table (complete and kept current by its triggers: they are made in one transaction).
 *
 * @example
 * ```ts
 * import { openMemoryDb } from "../database.ts";
 *
 * hasEntityAliases(openMemoryDb(":memory:")); // true
 * ```
 */
export function hasEntityAliases(db: DatabaseSync): boolean {
  return prepared(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'entity_aliases'").get() !==
    undefined;
}

/**
 * Makes what is missing of {@link GRAPH_READ_INDEXES} and the alias table, after the schema's migrations. A storage
 * fault (a full or read-only disk) leaves that part out — the reads scan as before until a later open — and any
 * other error is thrown.
 *
 * @example
 * ```ts
 * import { DatabaseSync } from "node:sqlite";
 * import { openMemoryDb } from "../database.ts";
 *
 * const db: DatabaseSync = openMemoryDb(":memory:"); // openMemoryDb calls it
 * ensureGraphReadIndexes(db); // nothing left to make
 * ```
 */
export function ensureGraphReadIndexes(db: DatabaseSync): void {
  for (const index of GRAPH_READ_INDEXES) softly(() => db.exec(index));
  if (hasEntityAliases(db)) return;
  softly(() => {
    db.exec("BEGIN IMMEDIATE");
    try {
      db.exec(ENTITY_ALIASES);
      db.exec("COMMIT");
    } catch (error) {
      // BEGIN itself may be what failed (nothing to roll back then).
      if (db.isTransaction) db.exec("ROLLBACK");
      throw error;
    }
  });
}

/** Runs `write`, going on without it when the disk is full or read-only. */
function softly(write: () => void): void {
  try {
    write();
  } catch (error) {
    if (!storageFault(error)) throw error;
  }
}
