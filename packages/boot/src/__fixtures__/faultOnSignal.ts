// Test fixture, loaded into a real app process with `node --import`: on SIGUSR2 it fails the way
// a bug would, with a rejection nobody handles (STREAMGATE_FIXTURE_FAULT=reject, the default) or
// an exception thrown from a timer (=throw). The app's own code is unchanged; its fault policy
// is what the test watches.
const kind = process.env.STREAMGATE_FIXTURE_FAULT ?? 'reject';

process.on('SIGUSR2', () => {
  if (kind === 'throw') {
    setImmediate(() => {
      throw new Error('fixture: exception nobody catches');
    });
  } else {
    void Promise.reject(new Error('fixture: rejection nobody handles'));
  }
});
