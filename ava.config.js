export default {
  files: ['dist/tests/**/*.test.js'],
  timeout: '60s',
  concurrency: 2,
  workerThreads: false,
};
