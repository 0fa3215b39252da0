// The Files page queue: a pure reducer over `file-job` events and
// `list_file_jobs` snapshots. Events and the snapshot can arrive in either
// order, so a finished job never goes back to running because of a late event.

import type { FileJob, FileJobState } from './types';

export const TERMINAL: ReadonlySet<FileJobState> = new Set(['done', 'failed', 'cancelled']);

export function isFinished(job: FileJob): boolean {
  return TERMINAL.has(job.state);
}

function newer(old: FileJob, incoming: FileJob): FileJob {
  if (isFinished(old) && !isFinished(incoming)) return old;
  if (old.state === incoming.state && old.state === 'running' && incoming.fraction < old.fraction) {
    // Progress only moves forward; a reordered event must not make the bar jump back.
    return { ...incoming, fraction: old.fraction };
  }
  return incoming;
}

/** Applies one `file-job` event: replaces the job with that id, or adds it. Keeps queue order (by id). */
export function applyJob(jobs: readonly FileJob[], job: FileJob): FileJob[] {
  const i = jobs.findIndex((j) => j.id === job.id);
  if (i === -1) return [...jobs, job].sort((a, b) => a.id - b.id);
  const next = newer(jobs[i], job);
  if (next === jobs[i]) return jobs as FileJob[];
  const out = jobs.slice();
  out[i] = next;
  return out;
}

/** Applies a snapshot (list_file_jobs or transcribe_files' answer) over what events already said. */
export function applyJobs(jobs: readonly FileJob[], listed: readonly FileJob[]): FileJob[] {
  return listed.reduce<FileJob[]>((acc, j) => applyJob(acc, j), jobs.slice());
}

/** After clear_file_jobs: the shell forgets finished jobs; so do we. */
export function withoutFinished(jobs: readonly FileJob[]): FileJob[] {
  return jobs.filter((j) => !isFinished(j));
}

export interface QueueSummary {
  total: number;
  active: number;
  done: number;
  failed: number;
}

export function summarize(jobs: readonly FileJob[]): QueueSummary {
  return {
    total: jobs.length,
    active: jobs.filter((j) => j.state === 'queued' || j.state === 'running').length,
    done: jobs.filter((j) => j.state === 'done').length,
    failed: jobs.filter((j) => j.state === 'failed').length,
  };
}

export const STATE_LABEL: Record<FileJobState, string> = {
  queued: 'Queued',
  running: 'Transcribing',
  done: 'Done',
  failed: 'Failed',
  cancelled: 'Cancelled',
};
