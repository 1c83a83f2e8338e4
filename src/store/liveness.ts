// Which saved runs are live. A worker that trains a run stores it as 'running' and holds the
// run's Web Lock 'run:<id>' for as long as the run is open (./locks.ts). When the page dies (a
// crash, a closed tab, a kill, a reload mid-step) the browser frees the lock but nothing is left
// to rewrite the status; a full disk can refuse even that small write. So 'running' with nobody
// holding the lock means interrupted: the committed steps are kept and Resume goes on from the
// last checkpoint. Derived when read, never stored: the tab that trains the run sees 'running'.
import { runLockName } from './locks';
import type { RunStatus } from './schema';

/** A stored status, or 'interrupted': stored as 'running', but nobody trains it. */
export type ShownStatus = RunStatus | 'interrupted';

/** The part of the Web Locks API that tells which locks are held (navigator.locks satisfies it). */
export interface LockQueryLike {
  query(): Promise<{ held?: { name?: string }[] }>;
}

const PREFIX = runLockName('');

/**
 * The ids of the runs whose lock is held now, by any tab, window or worker of this origin; null
 * where the browser cannot tell (no navigator.locks.query), in which case no run is called interrupted.
 */
export async function heldRunIds(locks: LockQueryLike | null = defaultLockQuery()): Promise<Set<string> | null> {
  if (!locks) return null;
  try {
    const { held = [] } = await locks.query();
    return new Set(held.map((l) => l.name ?? '').filter((n) => n.startsWith(PREFIX)).map((n) => n.slice(PREFIX.length)));
  } catch {
    return null;
  }
}

/** The status to show for a stored run, given the held run locks (null: unknown, show as stored). */
export function shownStatus(run: { id: string; status: RunStatus }, held: ReadonlySet<string> | null): ShownStatus {
  return run.status === 'running' && held !== null && !held.has(run.id) ? 'interrupted' : run.status;
}

function defaultLockQuery(): LockQueryLike | null {
  const locks = (globalThis as { navigator?: { locks?: Partial<LockQueryLike> } }).navigator?.locks;
  return typeof locks?.query === 'function' ? (locks as LockQueryLike) : null;
}
