/**
 * docs/ARCHITECTURE.md lists the messages of each direction of each channel ("The protocol"): every message a table
 * declares is listed in its row, and every message a row lists is declared, so the list cannot fall behind the schema.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Table, UnionSchema } from '../../../src/protocol/schema';
import { toModelWorker, fromModelWorker } from '../../../src/protocol/modelWorker';
import { toTrainingWorker, fromTrainingWorker } from '../../../src/protocol/trainingWorker';
import { toWebview, fromWebview } from '../../../src/protocol/webview';

const TABLES: { readonly [name: string]: UnionSchema<'type', Table> } = {
  toTrainingWorker,
  fromTrainingWorker,
  toModelWorker,
  fromModelWorker,
  toWebview,
  fromWebview,
};

/** The rows of the table under "## The protocol": the message table each names → the messages it lists. */
function documentedRows(): Map<string, string[]> {
  const doc = fs.readFileSync(path.resolve(__dirname, '../../../docs/ARCHITECTURE.md'), 'utf8');
  const start = doc.indexOf('## The protocol');
  const section = doc.slice(start, doc.indexOf('\n## ', start + 1));
  const rows = new Map<string, string[]>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    // | direction | `file.ts` `table` | messages |
    const table = /^`\w+\.ts` `(\w+)`$/.exec(cells[2] ?? '')?.[1];
    if (table === undefined) continue;
    rows.set(
      table,
      [...(cells[3] ?? '').matchAll(/`([a-z]+\/[A-Za-z]+)`/g)].map((m) => m[1] as string),
    );
  }
  return rows;
}

describe('docs/ARCHITECTURE.md, "The protocol"', () => {
  const rows = documentedRows();

  it('has one row per message table, and no other', () => {
    expect([...rows.keys()].sort()).toEqual(Object.keys(TABLES).sort());
  });

  for (const [name, schema] of Object.entries(TABLES))
    it(`lists exactly the messages of ${name}, each once`, () => {
      const listed = rows.get(name) ?? [];
      const declared = Object.keys(schema.table);
      expect(declared.filter((t) => !listed.includes(t))).toEqual([]); // declared, not documented
      expect(listed.filter((t) => !declared.includes(t))).toEqual([]); // documented, not declared
      expect(new Set(listed).size).toBe(listed.length);
    });
});
