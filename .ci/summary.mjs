// Sums vitest JSON reports into the closing line "N passed, N failed, N skipped". A file that failed to load
// (no test ran in it) counts as one failure; a missing report counts as one failure.
import { readFileSync } from "node:fs"
let passed = 0, failed = 0, skipped = 0
for (const file of process.argv.slice(2)) {
  try {
    const report = JSON.parse(readFileSync(file, "utf8"))
    passed += report.numPassedTests
    failed += report.numFailedTests
    skipped += report.numPendingTests + report.numTodoTests
    for (const suite of report.testResults) {
      if (suite.status === "failed" && suite.assertionResults.length === 0) failed++
    }
    if (report.numTotalTests === 0) failed++
  } catch {
    failed++
  }
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`)
process.exit(failed > 0 ? 1 : 0)
