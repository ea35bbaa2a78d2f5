// Preloaded into every server under test (with --expose-gc): SIGUSR2 runs a full GC, so the
// memory benchmark reads RSS after collection without any server knowing about the benchmark.
process.on('SIGUSR2', () => {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
});
