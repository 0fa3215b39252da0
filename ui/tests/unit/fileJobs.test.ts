import { describe, expect, it } from 'vitest';
import { applyJob, applyJobs, summarize, withoutFinished } from '../../src/lib/fileJobs';
import type { FileJob } from '../../src/lib/types';
import { queuedJob } from '../builders';

const job = (id: number, over: Partial<FileJob> = {}): FileJob => queuedJob(id, `/a/f${id}.wav`, over);

describe('file queue reducer', () => {
  it('adds new jobs in id order and replaces known ones', () => {
    let q = applyJob([], job(2));
    q = applyJob(q, job(1));
    expect(q.map((j) => j.id)).toEqual([1, 2]);
    q = applyJob(q, job(2, { state: 'running', fraction: 0.3 }));
    expect(q[1]).toMatchObject({ state: 'running', fraction: 0.3 });
  });

  it('walks a job from queued to done', () => {
    const seq: FileJob[] = [
      job(1),
      job(1, { state: 'running', fraction: 0.25 }),
      job(1, { state: 'running', fraction: 0.8 }),
      job(1, { state: 'done', fraction: 1, durationMs: 5000, segments: [{ startMs: 0, endMs: 900, text: 'hi' }], historyId: 9 }),
    ];
    const q = seq.reduce<FileJob[]>((acc, e) => applyJob(acc, e), []);
    expect(q).toHaveLength(1);
    expect(q[0]).toMatchObject({ state: 'done', historyId: 9 });
    expect(q[0].segments).toHaveLength(1);
  });

  it('ignores late progress after a finished state and never moves progress back', () => {
    let q = applyJob([], job(1, { state: 'done', fraction: 1 }));
    q = applyJob(q, job(1, { state: 'running', fraction: 0.5 }));
    expect(q[0].state).toBe('done');
    let r = applyJob([], job(3, { state: 'running', fraction: 0.6 }));
    r = applyJob(r, job(3, { state: 'running', fraction: 0.4 }));
    expect(r[0].fraction).toBe(0.6);
  });

  it('merges a snapshot that is older than the events already seen', () => {
    const events = applyJob([], job(1, { state: 'failed', error: 'cannot decode' }));
    const q = applyJobs(events, [job(1, { state: 'running', fraction: 0.1 }), job(2)]);
    expect(q.map((j) => j.state)).toEqual(['failed', 'queued']);
  });

  it('clears finished jobs and summarizes', () => {
    const q = [job(1, { state: 'done' }), job(2, { state: 'running' }), job(3, { state: 'failed' }), job(4, { state: 'cancelled' })];
    expect(summarize(q)).toEqual({ total: 4, active: 1, done: 1, failed: 1 });
    expect(withoutFinished(q).map((j) => j.id)).toEqual([2]);
  });
});
