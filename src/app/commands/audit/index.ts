// `case-read audit …`: one file per family of commands, loaded only when asked for.
//   trail.ts   verify, query, checkpoints, keygen (decisions §9)
//   proofs.ts  vkey, verify-proof, checkpoint, prove, verify --since (decisions §14)
//   archive.ts archive, verify --archive (decisions §15)
//   options.ts what they share: options, files, keys, errors
import { UsageError } from '../exit.js';
import type { Io } from '../io.js';

/** Runs `audit SUB ARGS`; an unknown SUB is a usage error listing the known ones. */
export async function audit(sub: string | undefined, args: string[], io: Io): Promise<number> {
  const given = (option: string) => args.some((a) => a === option || a.startsWith(`${option}=`));
  if (sub === 'archive') return (await import('./archive.js')).auditArchiveCommands.archive(args, io);
  if (sub === 'verify' && given('--archive')) {
    return (await import('./archive.js')).auditArchiveCommands['verify-archive'](args, io);
  }
  if (sub === 'verify' && given('--since')) {
    return (await import('./proofs.js')).auditProofCommands['verify-since'](args, io);
  }
  if (sub === 'verify' || sub === 'query' || sub === 'keygen' || sub === 'checkpoints') {
    return (await import('./trail.js')).auditTrailCommands[sub](args, io);
  }
  if (sub === 'vkey' || sub === 'verify-proof' || sub === 'checkpoint' || sub === 'prove') {
    return (await import('./proofs.js')).auditProofCommands[sub](args, io);
  }
  throw UsageError.unknownSubcommand(
    'audit',
    'verify, query, checkpoints, checkpoint, prove, archive, keygen, vkey or verify-proof',
    sub,
  );
}
