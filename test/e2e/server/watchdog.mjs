// Runs a command as a child and makes sure it stops by itself: when this process's standard
// input closes (the test process that started it is gone), after a maximum lifetime, or on
// SIGTERM/SIGINT (forwarded). SIGHUP is forwarded too; SIGUSR2 becomes SIGKILL (a crash). Usage: node watchdog.mjs <max-ms> <command> [args...]
import { spawn } from 'node:child_process';

const [maxMs, command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'] });
let stopping = false;
const stop = (reason) => {
  if (stopping) return;
  stopping = true;
  process.stderr.write(`watchdog: stopping the server (${reason})\n`);
  child.kill('SIGTERM');
  setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
};
setTimeout(() => stop('maximum lifetime reached'), Number(maxMs)).unref();
process.stdin.on('end', () => stop('parent went away'));
process.stdin.on('error', () => stop('parent went away'));
process.stdin.resume();
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
// SIGHUP asks the server to reload its policy: passed on as it is.
process.on('SIGHUP', () => child.kill('SIGHUP'));
// SIGUSR2 crashes the server (SIGKILL), for durability tests.
process.on('SIGUSR2', () => child.kill('SIGKILL'));
child.on('exit', (code, signal) => {
  process.exitCode = code ?? (signal ? 1 : 0);
  process.stdin.destroy();
});
