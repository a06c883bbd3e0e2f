/**
 * Vitest global setup: gives the WebGPU tests an adapter on a machine without a GPU. Debian's
 * Chromium ships SwiftShader's Vulkan driver (`vk_swiftshader_icd.json`, with the Vulkan loader
 * libvulkan.so.1 beside it) in its library folder; this points `VK_ICD_FILENAMES` at it and puts
 * the folder on `LD_LIBRARY_PATH`, before the test processes start (the pool is 'forks', so they
 * inherit both; the loader reads them when a process starts and when Dawn creates its instance).
 *
 * Searched: the usual Debian/Ubuntu locations (test/e2e/setup.sh installs Debian's chromium).
 * A `VK_ICD_FILENAMES` already set is left alone (e.g. to test a real GPU's driver). With no
 * SwiftShader found, nothing changes: the WebGPU tests skip and say why when no adapter opens.
 *
 * Leaves out: opening the device (src/lab/platform/webgpu.node.ts).
 */

import { existsSync } from 'node:fs';
import * as path from 'node:path';

/** Folders where Debian-family Chromium packages keep their libraries. */
export const SWIFTSHADER_DIRS = [
  '/usr/lib/chromium',
  '/usr/lib/chromium-browser',
  '/usr/lib64/chromium',
  '/usr/lib64/chromium-browser',
];

/** The first SwiftShader Vulkan ICD manifest among `dirs`, or null. */
export function findSwiftShaderIcd(dirs: readonly string[] = SWIFTSHADER_DIRS): string | null {
  for (const d of dirs) {
    const icd = path.join(d, 'vk_swiftshader_icd.json');
    if (existsSync(icd)) return icd;
  }
  return null;
}

export function setup(): void {
  if (process.env.VK_ICD_FILENAMES) return;
  const icd = findSwiftShaderIcd();
  if (!icd) return;
  process.env.VK_ICD_FILENAMES = icd;
  const dir = path.dirname(icd);
  if (existsSync(path.join(dir, 'libvulkan.so.1'))) {
    const prev = process.env.LD_LIBRARY_PATH;
    process.env.LD_LIBRARY_PATH = prev ? `${dir}${path.delimiter}${prev}` : dir;
  }
}
