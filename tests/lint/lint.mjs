// Lints Cypher with Neo4j's parser (@neo4j-cypher/language-support, offline, empty schema).
// Input: JSON on stdin, [{"file": "<path>", "text": "<statement>"}, ...], or file paths as arguments.
// Output: JSON on stdout, [{"file", "severity": "error"|"warning"|..., "message", "line", "param"}].
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const lintDir = process.env.NEORAG_LINT_DIR || join(here, '..', '.lint');
const require = createRequire(join(lintDir, 'package.json'));
const { lintCypherQuery, isNotParamError } = require('@neo4j-cypher/language-support');

const SEVERITY = { 1: 'error', 2: 'warning', 3: 'information', 4: 'hint' };

function readInput() {
  const args = process.argv.slice(2);
  if (args.length > 0) {
    return args.map((file) => ({ file, text: readFileSync(file, 'utf8') }));
  }
  return JSON.parse(readFileSync(0, 'utf8'));
}

const out = [];
for (const { file, text } of readInput()) {
  const { diagnostics } = lintCypherQuery(text, {});
  for (const d of diagnostics) {
    out.push({
      file,
      severity: SEVERITY[d.severity] || String(d.severity),
      message: d.message,
      line: d.range ? d.range.start.line + 1 : null,
      param: !isNotParamError(d),
    });
  }
}
process.stdout.write(JSON.stringify(out, null, 1) + '\n');
