/**
 * Attention snapshots in a run folder: each is saved as
 * snapshots/step-NNNNNNN.safetensors (the step in seven digits; maps as F32, masks as U8,
 * tokens, head scores and the maps' key/value heads in the metadata), listed, and read back
 * checked, so the dashboard's
 * timeline can show a head learning.
 *
 * Leaves out: taking a snapshot from a model (inference/takeSnapshot.ts).
 */

import { EngineError } from '../../engine/errors';
import { decodeSafetensors, encodeSafetensors } from '../../engine/io/safetensors';
import type { AttentionMapData, AttentionSnapshot, AttentionStack, MaskData } from '../../protocol/model';
import { validateSnapshot } from '../../protocol/model';
import type { LabFs } from '../files/labFs';
import { listNames, writeFile } from '../files/labFs';
import { RUN_FILES } from './runFolder';
import { readCapped } from '../files/fileCaps';

/** Snapshot file format version: 1 = maps, masks and tokens; 2 adds head scores. */
export const SNAPSHOT_VERSION = '2';

/**
 * A map's tensor in a snapshot file, in every version of the format: `map.<stack>.<layer>`,
 * e.g. `map.decoder.cross.1` (the stack is checked with the rest of the snapshot).
 */
const MAP_TENSOR = /^map\.(\w+\.\w+)\.(\d+)$/;

function fileOf(fs: LabFs, runDir: string, step: number): string {
  return fs.join(runDir, RUN_FILES.snapshots, `step-${String(step).padStart(7, '0')}.safetensors`);
}

/** Writes one snapshot file (atomically). */
export async function saveSnapshot(fs: LabFs, runDir: string, s: AttentionSnapshot): Promise<void> {
  const tensors = [
    ...s.maps.map((m) => ({ name: `map.${m.stack}.${m.layer}`, dtype: 'F32' as const, shape: m.shape, data: m.data })),
    ...s.masks.map((m) => ({ name: `mask.${m.name}`, dtype: 'U8' as const, shape: m.shape, data: m.data })),
  ];
  // Version 2 adds headScores (JSON); version 1 files, without it, still load.
  const meta = {
    format: 'attention-lab-snapshot',
    version: SNAPSHOT_VERSION,
    step: String(s.step),
    srcTokens: JSON.stringify(s.srcTokens),
    tgtTokens: JSON.stringify(s.tgtTokens),
    ...(s.headScores ? { headScores: JSON.stringify(s.headScores) } : {}),
    // Grouped-query attention: the key/value heads of each map, by its tensor name (absent: one per head).
    ...(s.maps.some((m) => m.kvHeads !== undefined)
      ? { kvHeads: JSON.stringify(Object.fromEntries(s.maps.map((m) => [`map.${m.stack}.${m.layer}`, m.kvHeads]))) }
      : {}),
  };
  await writeFile(fs, fileOf(fs, runDir, s.step), encodeSafetensors(tensors, meta));
}

/** The run's snapshot files by step, ascending. */
async function snapshotFiles(fs: LabFs, runDir: string): Promise<{ step: number; file: string }[]> {
  const dir = fs.join(runDir, RUN_FILES.snapshots);
  return (await listNames(fs, dir))
    .flatMap((n) => {
      const m = /^step-(\d+)\.safetensors$/.exec(n);
      return m ? [{ step: Number(m[1]), file: fs.join(dir, n) }] : [];
    })
    .sort((a, b) => a.step - b.step);
}

/** Steps of the run's snapshot files, ascending. */
export async function snapshotSteps(fs: LabFs, runDir: string): Promise<number[]> {
  return (await snapshotFiles(fs, runDir)).map((f) => f.step);
}

/** Reads the snapshot of `step` (throws when there is none, or on a damaged file). */
export async function readSnapshot(fs: LabFs, runDir: string, step: number): Promise<AttentionSnapshot> {
  const files = await snapshotFiles(fs, runDir);
  const found = files.find((f) => f.step === step);
  if (!found)
    throw new EngineError(
      'input/invalid',
      `${runDir} has no snapshot at step ${step}; snapshots: ${files.map((f) => f.step).join(', ') || 'none'}.`,
    );
  return readSnapshotFile(fs, found.file);
}

async function readSnapshotFile(fs: LabFs, file: string): Promise<AttentionSnapshot> {
  const f = decodeSafetensors(await readCapped(fs, file, 'snapshot'), fs.basename(file));
  const maps: AttentionMapData[] = [];
  const masks: MaskData[] = [];
  const kvHeads: unknown = f.metadata.kvHeads === undefined ? {} : JSON.parse(f.metadata.kvHeads);
  const kvOf = (name: string): { kvHeads?: unknown } => {
    const v = kvHeads !== null && typeof kvHeads === 'object' ? (kvHeads as Record<string, unknown>)[name] : undefined;
    return v === undefined ? {} : { kvHeads: v };
  };
  for (const [tname, t] of f.tensors) {
    const m = MAP_TENSOR.exec(tname);
    if (m && t.data instanceof Float32Array) {
      maps.push({
        stack: m[1] as AttentionStack,
        layer: Number(m[2]),
        shape: t.shape as unknown as [number, number, number],
        data: t.data,
        ...(kvOf(tname) as { kvHeads?: number }), // checked with the rest by validateSnapshot
      });
    } else if (tname.startsWith('mask.') && t.data instanceof Uint8Array)
      masks.push({ name: tname.slice(5), shape: t.shape, data: t.data });
  }
  const scores: unknown = f.metadata.headScores === undefined ? undefined : JSON.parse(f.metadata.headScores);
  return validateSnapshot(
    {
      step: Number(f.metadata.step),
      srcTokens: JSON.parse(f.metadata.srcTokens ?? '[]'),
      tgtTokens: JSON.parse(f.metadata.tgtTokens ?? '[]'),
      maps,
      masks,
      ...(scores === undefined ? {} : { headScores: scores }),
    },
    file,
  );
}

/** Every readable snapshot of a run, by step (damaged files are skipped: {@link readSnapshotsCounted} counts them). */
export async function readSnapshots(fs: LabFs, runDir: string): Promise<AttentionSnapshot[]> {
  return (await readSnapshotsCounted(fs, runDir)).snapshots;
}

/** Every readable snapshot of a run, by step, and how many damaged files were skipped (the caller says so). */
export async function readSnapshotsCounted(
  fs: LabFs,
  runDir: string,
): Promise<{ snapshots: AttentionSnapshot[]; skipped: number }> {
  const snapshots: AttentionSnapshot[] = [];
  let skipped = 0;
  for (const { file } of await snapshotFiles(fs, runDir)) {
    try {
      snapshots.push(await readSnapshotFile(fs, file));
    } catch {
      skipped++; // a snapshot cut short by a crash is not worth failing a report over
    }
  }
  return { snapshots, skipped };
}
