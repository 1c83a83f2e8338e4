// Opening the database: runs the migration ladder inside the upgrade transaction, turns a
// failed migration into an error that says so (the upgrade is rolled back, the old data kept),
// and closes this connection when another tab needs to upgrade, so that tab is not blocked.
import { openDB, type IDBPDatabase } from 'idb';
import { migrate, type AnyDatabase, type UpgradeTransaction } from './migrations';
import { DB_VERSION, type StoreSchema } from './schema';

export interface OpenDatabaseOptions {
  /** Called once this connection is closed for another tab's upgrade, or by the browser. */
  onClose?: (reason: string) => void;
  /** Called while an older connection in another tab delays our upgrade. */
  onBlocked?: () => void;
  /** The version to open (tests open older versions); default DB_VERSION. */
  version?: number;
}

export async function openDatabase(name: string, options: OpenDatabaseOptions = {}): Promise<IDBPDatabase<StoreSchema>> {
  const version = options.version ?? DB_VERSION;
  let failure: { from: number; error: unknown } | null = null;
  let db: IDBPDatabase<StoreSchema>;
  try {
    db = await openDB<StoreSchema>(name, version, {
      upgrade(database, oldVersion, newVersion, tx) {
        tx.done.catch(() => {}); // its rejection is reported through openDB's
        // idb does not await upgrade(): a failing step must abort the transaction itself.
        migrate(database as unknown as AnyDatabase, oldVersion, newVersion ?? version, tx as unknown as UpgradeTransaction).catch((error: unknown) => {
          failure = { from: oldVersion, error };
          try {
            tx.abort();
          } catch {
            // already finished
          }
        });
      },
      blocked: () => options.onBlocked?.(),
      blocking(_current, next, event) {
        (event.target as IDBDatabase).close();
        options.onClose?.(`another tab opened the database at version ${next ?? 'deleted'}`);
      },
      terminated: () => options.onClose?.('the browser closed the connection'),
    });
  } catch (err) {
    const f = failure as { from: number; error: unknown } | null;
    if (f) {
      const reason = f.error instanceof Error ? f.error.message : String(f.error);
      throw new Error(`upgrading database "${name}" from version ${f.from} to ${version} failed, nothing was changed: ${reason}`, { cause: f.error });
    }
    if ((err as { name?: string }).name === 'VersionError') {
      throw new Error(`database "${name}" was written by a newer version of this app than this page (schema ${version}); reload the page to get the newest version`, { cause: err });
    }
    throw err;
  }
  return db;
}
