import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { writeReport } from './report.js';
import type { BenchResults } from './report.js';

// `node --import tsx test/bench/renderReport.ts test/bench/results/results.json`: renders
// results.md and chart.svg again from a run's JSON (after a change to the report, not the run).

const [file] = process.argv.slice(2);
if (file === undefined) throw new Error('usage: renderReport.ts <results.json>');
// Our own output, written by writeReport: trusted as its type.
const results = JSON.parse(readFileSync(file, 'utf8')) as BenchResults;
writeReport(results, dirname(file));
