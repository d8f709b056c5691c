// The `audit` commands: the audit trail checked, read, proven and archived
// (docs/operations/audit-trail.md), and `subject-access`: what each says in its help
// (AUDIT_WORDS), then the tree of them. Their work is in src/app/commands/audit/, loaded only
// when one of its commands runs:
//   trail.ts   verify, query, checkpoints, keygen (decisions §9)
//   proofs.ts  vkey, verify-proof, checkpoint, prove, verify --since (decisions §14)
//   archive.ts archive, verify --archive, query --archive (decisions §15)
//   options.ts what they share: options, files, keys, errors
import { type Command, Option, type OptionValues } from '@commander-js/extra-typings';
import { UsageError } from '../commands/exit.js';
import {
  archiveOption,
  collect,
  jsonOption,
  originOption,
  policyOption,
  publicKeyOption,
  publicKeysOption,
  type StoreOptions,
  vkeyOption,
  withLogKeys,
} from './options.js';
import { type CliRun, runsAndHolds, type WordsByPath } from './program.js';
import { work } from './work.js';

/** How the checkpoint of `--since` and `--archive` is checked: named in the help of the commands that take them. */
const NOTE_KEYS =
  'its checkpoint is checked with --vkey, else each --public-key (under --origin), else the public half of AUDIT_SIGNING_KEY';

export const AUDIT_WORDS: WordsByPath = {
  audit: { summary: 'the audit trail: check it, read it, prove records in it, archive it' },
  'audit verify': {
    summary: 'check the audit trail, or what came since a saved checkpoint, or an archive',
    description: [
      'Checks the audit trail, in one of three forms; exit 1 names the first thing wrong.',
      "audit verify: the store's hash chain; with --public-key, also every stored checkpoint (and each in a --checkpoints file): its signature, its note, and that the chain passes through its head.",
      "audit verify --since CHECKPOINT_FILE: the store's newest checkpoint is signed and extends the one saved in CHECKPOINT_FILE (by `audit checkpoint`), and the records since it verify; " +
        `${NOTE_KEYS}.`,
      `audit verify --archive DIR: the archive in DIR on its own (of \`audit archive\`); ${NOTE_KEYS}. An archive written on across a break of the trail (audit continue) holds what each log signed: repeat --vkey for each.`,
      "With --policy FILE, the newest checkpoint must also meet the policy's quorum of witnesses' cosignatures (with --archive: the archive's checkpoint, or a newer one of the store (--audit-store) that extends it).",
    ],
    usage: '[--since FILE | --archive DIR] [options]',
    examples: [
      'case-read audit verify --public-key audit-signing-key.pub.pem --checkpoints serve.log',
      'case-read audit verify --since last-month.note --vkey audit.vkey',
      'case-read audit verify --archive /archive/audit --vkey audit.vkey --policy policy.txt',
    ],
  },
  'audit query': {
    summary: 'show audit records, oldest first, from the store or an archive',
    description: [
      'Shows the audit records that match every filter given, oldest first, one a line (--json: one JSON array).',
      `audit query: the records the store holds. audit query --archive DIR: the records archived in DIR (by \`audit archive\`), each bundle checked against its hash tile as it is read; ${NOTE_KEYS}.`,
    ],
    usage: '[--archive DIR] [options]',
    examples: [
      'case-read audit query --client client-a --since 2026-11-22T09:00:00Z --limit 50',
      'case-read audit query --archive /archive/audit --vkey audit.vkey --crn X123456',
    ],
  },
  'audit checkpoints': {
    summary: 'list the stored checkpoints, and who cosigned each',
    description:
      "Lists the stored checkpoints, lowest seq first, each with the names its cosignatures are signed under (--json: one JSON line each). With --policy, the policy's witnesses whose cosignatures verify, and whether they meet its quorum. The log's own signature is `audit verify`'s to check.",
    examples: ['case-read audit checkpoints --policy policy.txt'],
  },
  'audit checkpoint': {
    summary: 'print the newest stored checkpoint, as its signed note',
    description:
      "Prints the newest stored checkpoint that carries a note, exactly as signed: the log's signature line, then every cosignature kept with it. Save one now and then where the store's writers cannot reach it: `audit verify` checks what came after it.",
    examples: ['case-read audit checkpoint > today.note'],
  },
  'audit prove': {
    summary: "prove records are in the trail's tree, or that its tree extends an older one",
    description: [
      "Proves records are in the trail's tree, or that a tree extends an older one. Each proof is checked against the signed root before it is written.",
      "audit prove REQUEST_ID | --seq N --out DIR: for each record of the request (at most 10), or record N, writes DIR/SEQ.entry, the record's exact bytes (personal data: readable by its owner only), and DIR/SEQ.tlog-proof, its C2SP tlog-proof against the newest stored checkpoint (with --policy: the newest one that meets the policy's quorum).",
      "audit prove --consistency OLD_SIZE [--size NEW_SIZE]: prints the hashes (base64, one a line) proving the tree of NEW_SIZE records (else the newest checkpoint's) extends the tree of OLD_SIZE records.",
      `With --archive DIR, either proof is made from the archive in DIR, against its own checkpoint (no --policy, no --size); ${NOTE_KEYS}. From the store, a log origin given (--vkey, --origin, AUDIT_ORIGIN) must be the trail's.`,
    ],
    usage: 'REQUEST_ID|--seq N|--consistency OLD_SIZE [options]',
    examples: [
      'case-read audit prove --seq 41234 --out proofs/',
      'case-read audit prove 9b2f0c1e-request-id --out proofs/ --policy policy.txt',
      'case-read audit prove --consistency 1000000',
      'case-read audit prove --archive /archive/audit --vkey audit.vkey --seq 41234 --out proofs/',
    ],
  },
  'audit archive': {
    summary: 'archive the older records to a directory; the store then lets go of them',
    description: [
      "Archives the older audit records to DIR as C2SP tlog-tiles, sealed by a checkpoint signed with AUDIT_SIGNING_KEY (under AUDIT_ORIGIN), for the store to stay bounded. One run at a time: another one running is exit 75. DIR must be this trail's, checked by its root.",
      'audit archive --to DIR --before TIME | --older-than DAYS: writes the records stored before then, rounded down to whole tiles of 256 and to the newest checkpoint; then, unless --keep-in-store, the store lets go of every record DIR holds, once DIR holds it on its disk.',
      'audit archive --to DIR --let-go-only: writes nothing, and the store lets go of what DIR holds (once it was copied elsewhere, say).',
    ],
    usage: '--to DIR --before|--older-than|--let-go-only [options]',
    examples: [
      'case-read audit archive --to /archive/audit --older-than 30',
      'case-read audit archive --to /archive/audit --let-go-only',
    ],
  },
  'audit continue': {
    summary: 'go on as a new log after the store lost records its witnesses hold',
    description: [
      "After a restore from backup or a failover to a standby that had not received the last commits, the store's trail is shorter than what its witnesses cosigned, and serve refuses it. audit continue asks the witnesses of the log that goes before (--policy, else AUDIT_WITNESS_POLICY) what they hold; when a quorum holds more records than the store, it appends the continuation record (a statement, signed by the new log's key (--key) under --origin and by the key of the log before (AUDIT_SIGNING_KEY), of the log that went before, the records kept, the records its witnesses held, from when to when records are lost, and --reason) and the first checkpoint of the new log, and prints what was lost.",
      'Refused when the witnesses hold nothing more than the store, when one holds another tree, and when the trail is not the one AUDIT_ORIGIN names. Stop every serve of the trail first. Then set AUDIT_ORIGIN to the new origin, AUDIT_SIGNING_KEY to the new key (the key of the log before is learned from the statement), give the witnesses the new log, and serve with a policy whose log line is its key (docs/operations/runbook.md).',
    ],
    usage: '--origin NEW --key FILE --reason TEXT [--policy FILE] [options]',
    examples: [
      "case-read audit continue --origin case-read.prod.example.org/audit-2 --key /secure/audit-2/audit-signing-key.pem --reason 'restored from the 04:00 backup after disk loss (INC-1234)' --policy policy.txt",
    ],
  },
  'audit keygen': {
    summary: 'create a key pair to sign the audit checkpoints with',
    description:
      'Writes a new Ed25519 key pair to DIR: audit-signing-key.pem (mode 0600: for AUDIT_SIGNING_KEY, nowhere else) and audit-signing-key.pub.pem (for `audit verify` and auditors; keep a copy away from the store). An existing key is never overwritten.',
    examples: ['case-read audit keygen --dir /secure/audit-key'],
  },
  'audit vkey': {
    summary: "print the log's verifier key, for auditors",
    description:
      "Prints the verifier key line (ORIGIN+KEYID+KEY) auditors check checkpoints and proofs with: of --public-key, else of AUDIT_SIGNING_KEY's key, under --origin, else AUDIT_ORIGIN, else its default.",
    examples: ['case-read audit vkey > audit.vkey'],
  },
  'audit verify-proof': {
    summary: "check a record's proof offline, against the log's verifier key",
    description:
      "Checks, offline (no store, no network), that the proof's checkpoint is signed by the key and names its log, and that ENTRY's leaf hash with the proof's hashes makes the signed root. With --policy, the checkpoint must also carry a quorum of the policy's witnesses' cosignatures. Exit 1 says which check failed.",
    examples: ['case-read audit verify-proof proofs/41234.tlog-proof proofs/41234.entry --vkey audit.vkey'],
  },
  'subject-access': {
    summary: 'what is held about a crn, and who was given it, as GET /subject-access-request answers',
    description: [
      "Prints the content of a subject access request for the crn, as serve's GET /subject-access-request answers it (200), from the audit store and the archive (and the case store, with --case-store): every audit record naming the crn in the window, each with its exact bytes and its index in the log, and one proof of them all: the store's newest checkpoint, with the cosignatures held for it, and the tree's hashes that prove every record against it. Complete or nothing: a record that cannot be read or does not verify, or one newer than the newest checkpoint, is exit 1 naming why.",
      `Nothing held about the crn in the window, and no audit records lost in it: nothing printed, exit 0 (serve answers 204). A loss of audit records in the window (a trail continued after a restore) is printed as the content's gaps. The archive's $NOTE_KEYS.`,
      'A saved answer is checked with `subject-access verify ANSWER`.',
    ],
    usage: '--crn CRN [options] | verify ANSWER [options]',
    examples: [
      'case-read subject-access --crn X123456 --from 2026-01-01 --archive /archive/audit --vkey audit.vkey',
    ],
  },
  'subject-access verify': {
    summary: 'check a saved subject access answer offline: every disclosure proved in the trail',
    description: [
      "Checks, offline (no store, no network), a saved answer of GET /subject-access-request or of `subject-access`: its checkpoint is signed by the log's key; its proof's hashes are exactly those that prove every disclosure's index in the tree the checkpoint signs; each disclosure's entry is proved with them against the signed root; and each disclosure shows what its entry says (time, requestId, operation, recipient, onBehalfOf, status, index, the answer's crn).",
      "Exit 0 printing how many disclosures were proved and against which checkpoint; exit 1 naming the first disclosure that is not (its position, index and requestId), or what else is wrong. The checkpoint is checked with --vkey, else each --public-key (under --origin), else the public half of AUDIT_SIGNING_KEY. Go's sumdb/tlog checks the same answer with examples/subject-access-verify.",
    ],
    examples: ['case-read subject-access verify answer.json --vkey audit.vkey'],
  },
};

export function auditCommands(root: Command, run: CliRun, stores: StoreOptions): void {
  const audit = root.command('audit');
  /** An `audit` command: its own arguments and options (`own`), then --json. */
  const plain = <A extends unknown[], O extends OptionValues>(
    name: string,
    own: (command: Command) => Command<A, O>,
  ) => own(audit.command(name)).addOption(jsonOption());
  /** An `audit` command of the store: its own arguments and options, then --audit-store and --json. */
  const stored = <A extends unknown[], O extends OptionValues>(
    name: string,
    own: (command: Command) => Command<A, O>,
  ) => own(audit.command(name)).addOption(stores.auditStore()).addOption(jsonOption());
  const trail = run.loads(work.trail);
  const proofs = run.loads(work.proofs);

  stored('verify', (c) =>
    c
      .addOption(
        publicKeysOption('a public key (PEM) the checkpoints are signed with, as `audit keygen` wrote it'),
      )
      .addOption(
        new Option(
          '--checkpoints <FILE>',
          "also check the checkpoints in FILE (the output of `audit checkpoints --json`, or the service's log); needs --public-key; repeat it for each file",
        )
          .argParser(collect)
          .conflicts(['since', 'archive']),
      )
      .addOption(originOption())
      .addOption(
        new Option(
          '--since <CHECKPOINT_FILE>',
          'check what came after the checkpoint saved in CHECKPOINT_FILE',
        ).conflicts('archive'),
      )
      .addOption(archiveOption('check the archive in DIR instead of the store'))
      .addOption(vkeyOption().argParser(collect))
      .addOption(policyOption('the newest checkpoint must meet its quorum')),
  ).action(async (options) => {
    if (options.archive !== undefined) {
      const { verifyArchiveCommand } = await work.archive();
      return run.done(await verifyArchiveCommand({ ...options, archive: options.archive }, run.io));
    }
    if (options.since !== undefined) {
      const { verifySinceCommand } = await work.proofs();
      return run.done(await verifySinceCommand({ ...options, since: options.since }, run.io));
    }
    if (options.vkey !== undefined) {
      throw new UsageError(
        "--vkey goes with --since or --archive: audit verify checks the store's checkpoints with --public-key",
      );
    }
    return run.done(await (await work.trail()).verify(options, run.io));
  });
  stored('query', (c) =>
    withLogKeys(
      c
        .option('--request-id <ID>', 'the records of this request')
        .option('--client <CN>', 'the records of this client')
        .option('--crn <CRN>', 'the records of this case')
        .option('--since <ISO>', 'the records stored at or after this ISO 8601 date-time')
        .option('--limit <N>', 'at most N records')
        .addOption(archiveOption('read the archive in DIR instead of the store')),
    ),
  ).action(trail((m, options) => m.query(options, run.io)));
  stored('checkpoints', (c) =>
    c.addOption(policyOption("show each checkpoint's witnesses, and whether they meet its quorum")),
  ).action(trail((m, options) => m.checkpoints(options, run.io)));
  stored('checkpoint', (c) => c).action(proofs((m, options) => m.checkpoint(options, run.io)));
  stored('prove', (c) =>
    withLogKeys(
      c
        .argument('[REQUEST_ID]', 'the request whose records to prove')
        .option('--seq <N>', 'prove record N')
        .option('--out <DIR>', 'the directory to write the entries and proofs to')
        .option('--consistency <OLD_SIZE>', 'prove the tree extends the tree of OLD_SIZE records')
        .option('--size <NEW_SIZE>', "with --consistency: the tree to prove (else the newest checkpoint's)")
        .addOption(archiveOption('prove from the archive in DIR')),
    ).addOption(policyOption('prove against the newest checkpoint that meets its quorum')),
  ).action(proofs((m, requestId, options) => m.prove(requestId, options, run.io)));
  stored('archive', (c) =>
    c
      .requiredOption('--to <DIR>', 'the archive directory')
      .option('--before <TIME>', 'archive the records stored before this ISO 8601 date-time')
      .option('--older-than <DAYS>', 'archive the records older than DAYS days')
      .option('--keep-in-store', 'keep the archived records in the store too')
      .option('--let-go-only', 'archive nothing: the store lets go of what DIR holds')
      .addOption(
        publicKeysOption(
          'the public key (PEM) of a key signed with before AUDIT_SIGNING_KEY was rotated, accepted on the checkpoints already signed',
        ),
      ),
  ).action(run.loads(work.archive)((m, options) => m.archive(options, run.io)));
  stored('continue', (c) =>
    c
      .option('--origin <NEW>', 'the new log: its origin, which its checkpoints name from the break on')
      .option(
        '--key <FILE>',
        "the new log's private key (PEM, of `audit keygen`): AUDIT_SIGNING_KEY from then on",
      )
      .option(
        '--reason <TEXT>',
        'why records were lost: one line, stated in the trail and in every subject access answer whose window meets the loss, so no personal data (at most 500 characters)',
      )
      .addOption(
        policyOption('the policy of the log that goes before, whose witnesses are asked what they hold'),
      ),
  ).action(run.loads(work.continueTrail)((m, options) => m.continueTrail(options, run.io)));
  plain('keygen', (c) => c.requiredOption('--dir <DIR>', 'the directory to write the key pair in')).action(
    trail((m, options) => m.keygen(options, run.io)),
  );
  plain('vkey', (c) => c.addOption(publicKeyOption()).addOption(originOption())).action(
    proofs((m, options) => m.vkey(options, run.io)),
  );
  plain('verify-proof', (c) =>
    c
      .argument('<PROOF>', 'the tlog-proof file (SEQ.tlog-proof of `audit prove`)')
      .argument('<ENTRY>', 'the entry file (SEQ.entry of `audit prove`)')
      .addOption(vkeyOption().makeOptionMandatory())
      .addOption(policyOption("the proof's checkpoint must meet its quorum")),
  ).action(proofs((m, proof, entry, options) => m.verifyProof(proof, entry, options, run.io)));
}

/**
 * `case-read subject-access`: the content of a subject access request (decisions §22) from the
 * store and the archive, without serve. Its options are the audit commands' own.
 */
export function subjectAccessCommand(root: Command, run: CliRun, stores: StoreOptions): void {
  const subjectAccess = withLogKeys(
    root
      .command('subject-access')
      .requiredOption('--crn <CRN>', 'the case reference number the request is about')
      .option(
        '--from <DATE>',
        'the first day of the window, YYYY-MM-DD, Europe/London (default: the start of the trail)',
      )
      .option('--to <DATE>', 'the last day of the window, YYYY-MM-DD, Europe/London (default: today)')
      .addOption(archiveOption("the trail's archive (of `audit archive`), read with the store")),
  )
    .addOption(stores.auditStore())
    .addOption(stores.includedCaseStore());
  subjectAccess.action(run.loads(work.subjectAccess)((m, options) => m.subjectAccess(options, run.io)));
  // `subject-access verify ANSWER`: a command of its own below it, which --crn is not asked of.
  runsAndHolds(subjectAccess);
  withLogKeys(
    subjectAccess
      .command('verify')
      .argument('<ANSWER>', 'the saved answer: the JSON of GET /subject-access-request or of subject-access'),
  ).action(
    run.loads(work.subjectAccessVerify)((m, answer, options) =>
      m.subjectAccessVerify(answer, options, run.io),
    ),
  );
}
