// @callgate/cli: the public API. Anything exported here is public; add names deliberately.
export { buildProgram } from './program.js';
