#!/usr/bin/env node
// Judges every session of a generated campaign with the reference harness, for
// benchmarks/run.py to measure beside the plugin (CPU, wall, peak memory).
//
//   node benchmarks/reference.mjs /path/to/parse-run.mjs CAMPAIGN_DIR
//
// The reference harness is not part of this project: its path is given, and it
// is imported from there (its `parseSession(files)` judges one session: the
// files of one run, its turn files after it). A session here is what
// benchmarks/generate.py writes: `run-<arm>.jsonl`, then `run-<arm>.t2.jsonl`,
// `.t3`, ... in the same folder. Prints the sessions judged and the sufficiency
// buckets summed over them, a check that the work was done.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [reference, root] = process.argv.slice(2);
if (!reference || !root) {
  console.error('usage: reference.mjs PARSE_RUN_MJS CAMPAIGN_DIR');
  process.exit(2);
}
const { parseSession } = await import(pathToFileURL(reference).href);

const TURN = /^(.+)\.t(\d+)\.jsonl$/;

function sessionsOf(dir, out) {
  const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  const turns = new Map(); // base name -> [[turn, path], ...]
  const firsts = [];
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory()) sessionsOf(path, out);
    else if (e.name.endsWith('.jsonl')) {
      const m = TURN.exec(e.name);
      if (m) {
        if (!turns.has(m[1])) turns.set(m[1], []);
        turns.get(m[1]).push([Number(m[2]), path]);
      } else firsts.push([e.name.slice(0, -'.jsonl'.length), path]);
    }
  }
  for (const [base, path] of firsts) {
    const later = (turns.get(base) || []).sort((a, b) => a[0] - b[0]).map(([, p]) => p);
    out.push([path, ...later]);
  }
  return out;
}

const counts = {};
let sessions = 0;
let answered = 0;
for (const files of sessionsOf(root, [])) {
  const s = parseSession(files);
  sessions++;
  answered += s.sufficiency.answered;
  for (const [bucket, n] of Object.entries(s.sufficiency.counts)) counts[bucket] = (counts[bucket] || 0) + n;
}
console.log(`${sessions} sessions judged, ${answered} answered explore calls: ${JSON.stringify(counts)}`);
