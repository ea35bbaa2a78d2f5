// Fixture for spawnTsEntry tests: a TypeScript entry point that listens on port 0 and logs the
// chosen port as a JSON line, the way the relay and auth services do.
import { createServer } from 'node:http';

const label: string = process.argv[2] ?? 'fixture';
const server = createServer((_req, res) => res.end(label));
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : -1;
  process.stdout.write(`${JSON.stringify({ level: 30, msg: 'listening', name: label, port })}\n`);
});
process.once('SIGTERM', () => {
  process.stdout.write(`${JSON.stringify({ level: 30, msg: 'stopping' })}\n`);
  server.close(() => process.exit(0));
});
