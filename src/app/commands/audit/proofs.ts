// Where the CLI (src/app/cli/audit.ts) finds the audit log's C2SP commands (decisions §14),
// each in the file of what it proves or hands out.
export { checkpoint, vkey } from './checkpoint.js';
export { prove } from './prove.js';
export { verifyProof } from './verify-proof.js';
export { verifySinceCommand } from './verify-since.js';
