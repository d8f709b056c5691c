// Where each command's work is: a module of src/app/commands/, imported by the command's
// action when it runs, never before, so that `--help` and one command never load what another
// uses (a database driver, the HTTP app, the AWS SDK). The one list of them the tree names.
export const work = {
  serve: () => import('../commands/serve.js'),
  configCheck: () => import('../commands/config-check.js'),
  stores: () => import('../commands/stores.js'),
  openapi: () => import('../commands/openapi.js'),
  witness: () => import('../commands/witness.js'),
  pki: () => import('../commands/pki.js'),
  cases: () => import('../commands/cases.js'),
  tokens: () => import('../commands/tokens.js'),
  access: () => import('../commands/access.js'),
  certsSign: () => import('../commands/certs-sign.js'),
  trail: () => import('../commands/audit/trail.js'),
  proofs: () => import('../commands/audit/proofs.js'),
  archive: () => import('../commands/audit/archive.js'),
  continueTrail: () => import('../commands/audit/continue.js'),
  subjectAccess: () => import('../commands/subject-access.js'),
  subjectAccessVerify: () => import('../commands/subject-access-verify.js'),
};
