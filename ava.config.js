export default {
  files: ['dist/tests/**/*.test.js'],
  timeout: '60s',
  concurrency: 2,
  workerThreads: false,
  // The CLI fits its tables to COLUMNS (lib/cli/table-layout.ts): a shell that exports it would fold the rows the
  // tests read. Empty, it is not a width; the tests that want one give it.
  environmentVariables: { COLUMNS: '' },
};
