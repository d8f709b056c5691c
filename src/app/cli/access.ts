// The commands that administer who may call the service, on the access store: `clients`,
// `keys`, `certs` and `grants`: what each says in its help (ACCESS_WORDS), then the tree of
// them. Their work is in src/app/commands/access.ts (and certs-sign.ts), loaded when one runs.
import type { Command, OptionValues } from '@commander-js/extra-typings';
import {
  DEFAULT_LIMITED_ACCESS_SETTING,
  LIMITED_ACCESS_SETTINGS,
} from '../../domain/access/limited-access.js';
import { REDACTABLE_FIELDS } from '../../domain/access/redaction.js';
import { DEFAULT_CLIENT_CERT_DAYS } from '../../domain/certificates/renew.js';
import { QueueArn, RoleArn } from '../../domain/queue/arns.js';
import { jsonOption, type StoreOptions } from './options.js';
import { type CliRun, PERMISSION_LIST, type WordsByPath } from './program.js';
import { work } from './work.js';

export const ACCESS_WORDS: WordsByPath = {
  clients: {
    summary: 'the consumer services that may call the service, each named by its certificate CN',
  },
  'clients add': {
    summary: 'add a client with its permissions, and its queue, rate limit and on-behalf-of settings',
    description:
      'Adds the client CN (the subject CN of the certificate it presents) with the operations it may call; optionally its SQS queue for POST /token, its rate limit, how the on-behalf-of tokens of its users are checked, the fields withheld from its answers, and what it gets on a limited-access case when it acts as itself. A client already held is refused (change it in place with `clients update`). It takes effect on the next request; give it an API key with `keys issue`.',
    examples: [
      'case-read clients add client-b --permissions getCase,getHomeOfficeInterest --rate-limit 6000/1m',
      'case-read clients add client-c --permissions getCase --obo required --obo-issuer https://login.example --obo-jwks https://login.example/jwks.json --obo-audience case-read --redact communityManager.emailAddress',
    ],
  },
  'clients update': {
    summary:
      "change a client's settings in place: permissions, rate limit, queue, on-behalf-of, withheld fields, limited access; its keys kept",
    description: [
      "Changes the client CN in place: any option of `clients add` may be given (one or more is needed), each checked as `clients add` checks it, and each setting not given keeps what is held. The client's API keys, its revoked certificates and its suspension are kept, so its consumer goes on calling with the key it has. When any option is refused, nothing is written. It takes effect on the next request.",
      '`none` removes a rate limit (the service default, RATE_LIMIT_DEFAULT, applies), a queue (and the role held for it) or a role (STS_ROLE_ARN applies). The on-behalf-of options are merged with what is held: `--obo forbidden` clears the issuer, JWKS, audience and e-mail claim; on a client whose mode is optional or required, `--obo-audience` (or `--obo-issuer`, `--obo-jwks`, `--obo-email-claim`) alone changes only that; a switch to optional or required needs the issuer, JWKS and audience, given or already held.',
    ],
    examples: [
      'case-read clients update client-b --permissions getCase,getHomeOfficeInterest,getRiskScores --rate-limit 12000/1m',
      'case-read clients update client-c --obo-audience case-read-v2',
      'case-read clients update client-b --queue-arn none --redact communityManager.emailAddress',
    ],
  },
  'clients list': {
    summary: 'list the clients, with the certificate each last presented',
    description:
      'Lists every client: whether it is suspended, its permissions, and the certificate it last presented to the service, with when it expires and the days it has left.',
    examples: ['case-read clients list --access-store sqlite:/srv/case-read/access.db'],
  },
  'clients show': {
    summary: 'show a client as held, and its API keys',
    description:
      'Shows the client CN as held: its permissions, rate limit, queue, on-behalf-of settings, withheld fields and limited-access setting, and its API keys with the status of each (never the keys themselves).',
    examples: ['case-read clients show client-b'],
  },
  'clients suspend': {
    summary: 'refuse a client until it is resumed',
    description:
      'Suspends the client CN: its requests are refused (403) from the next one on, until `clients resume`. Its settings and keys are kept.',
    examples: ['case-read clients suspend client-b'],
  },
  'clients resume': {
    summary: 'serve a suspended client again',
    description:
      'Resumes the client CN, suspended by `clients suspend`: it is served again from the next request.',
    examples: ['case-read clients resume client-b'],
  },
  'clients remove': {
    summary: 'remove a client and its API keys',
    description:
      'Removes the client CN and every API key it holds; its requests are refused from the next one on.',
    examples: ['case-read clients remove client-b'],
  },
  keys: { summary: "a client's API keys: issue, list, revoke" },
  'keys issue': {
    summary: 'issue an API key for a client, printed once',
    description:
      'Issues a new API key for the client CN and prints it once, alone on its line; only its hash is stored, and it is not shown again. Keys issued before keep working: to rotate, issue one, then revoke the old one.',
    examples: ['case-read keys issue client-b --expires-in 90d'],
  },
  'keys list': {
    summary: "list a client's API keys and their status",
    description:
      "Lists the API keys of the client CN: each one's id, its status (active, active until a time, expired or revoked) and when it was created. The keys themselves are never shown.",
    examples: ['case-read keys list client-b'],
  },
  'keys revoke': {
    summary: 'revoke an API key',
    description: 'Revokes the API key KEY_ID: it stops working on the next request.',
    examples: ['case-read keys revoke KEY_ID'],
  },
  certs: { summary: "clients' certificates: sign a consumer's CSR, revoke a certificate" },
  'certs sign': {
    summary: "sign a consumer's CSR for a client, with the configured issuer",
    description:
      "Signs the consumer's CSR_FILE (PEM or DER, made with `openssl req`), checked as EST simplereenroll checks one, for the client CN, which must be held and be the CSR's subject CN. The issuer is CLIENT_CERT_ISSUER's: local (CLIENT_CA_CERT, CLIENT_CA_KEY) or acm-pca (ACM_PCA_ARN); nothing else of serve's configuration is read. Only the consumer's public key passes through: its private key stays with it. The certificate PEM goes to --out FILE, else to stdout; --json reports what was written to FILE.",
    examples: ['case-read certs sign client.csr --client client-b --out client.pem'],
  },
  'certs revoke': {
    summary: 'refuse a certificate, for one client or for every one',
    description:
      'Revokes the certificate with serial SERIAL: it is refused from the next request on, on every runtime. With --client, only when that client presents it; else whoever does.',
    examples: ['case-read certs revoke 4F1A09 --client client-b'],
  },
  grants: { summary: "the permissions an on-behalf-of user's requests are widened by" },
  'grants add': {
    summary: 'grant an on-behalf-of user permissions',
    description:
      "Grants the on-behalf-of user EMAIL (compared without regard to case) the permissions P: a client's request made for that user, with a verified token, may also call those operations. Grants widen operations, never the fields a client has withheld.",
    examples: ['case-read grants add officer@probation.example getCommunityManagerByCrn'],
  },
  'grants remove': {
    summary: "take permissions from an on-behalf-of user's grants",
    description:
      'Takes the permissions P from the grants of the on-behalf-of user EMAIL; any others granted are kept.',
    examples: ['case-read grants remove officer@probation.example getCommunityManagerByCrn'],
  },
  'grants list': {
    summary: 'list the on-behalf-of users granted permissions',
    description: 'Lists every on-behalf-of user that holds grants, with their permissions.',
    examples: ['case-read grants list'],
  },
};

/** `FIELD[,FIELD...]`: the fields a client can have withheld, for the help of --redact. */
const REDACT_LIST = `none, or one or more of ${REDACTABLE_FIELDS.join(', ')}`;

/** `deny|allow`: a client's setting for limited-access cases, for the help of --limited-access. */
const LIMITED_ACCESS_HELP = `what it gets on a limited-access case when it acts as itself (no on-behalf-of user): ${LIMITED_ACCESS_SETTINGS.join(' or ')}; deny is refused (403), allow is answered and the client enforces the case's rules itself`;

/** The arguments several commands take. */
const CN = ['<CN>', 'the client name'] as const;
const PERMISSIONS = ['<P[,P...]>', `the permissions, comma-separated: ${PERMISSION_LIST}`] as const;

/** `--permissions` of `clients add` (required) and `clients update`. */
const CLIENT_PERMISSIONS = `the operations it may call, comma-separated: ${PERMISSION_LIST}`;

/**
 * A client's settings but its permissions, as `clients add` gives them (each not given has its
 * default) and `clients update` changes them (each not given is kept).
 */
function clientSettings<A extends unknown[], O extends OptionValues>(c: Command<A, O>, to: 'add' | 'update') {
  const byDefault = (value: string) => (to === 'add' ? ` (default: ${value})` : '');
  return c
    .option(
      '--queue-arn <ARN>',
      `its SQS queue, read with the credentials of POST /token (with the issueQueueToken permission), e.g. ${QueueArn.example}; none: no queue, and no role for it${byDefault('none')}`,
    )
    .option(
      '--role-arn <ARN>',
      `the IAM role POST /token assumes for its queue, e.g. ${RoleArn.example}; none: STS_ROLE_ARN's${byDefault('none')}`,
    )
    .option(
      '--rate-limit <N/DURATION>',
      `at most N requests per DURATION for each of its API keys, e.g. 100/1s or 6000/1m; none: RATE_LIMIT_DEFAULT's${byDefault('none')}`,
    )
    .option(
      '--obo <MODE>',
      `whether its requests carry a user's token in X-On-Behalf-Of: forbidden (one sent is refused, 400), optional or required (one missing is refused, 401); optional and required need --obo-issuer, --obo-jwks and --obo-audience${to === 'update' ? ' (given, or held already)' : ''}, and such a token is checked with them; forbidden holds none of them${byDefault('forbidden')}`,
    )
    .option('--obo-issuer <ISSUER>', "the on-behalf-of tokens' iss")
    .option('--obo-jwks <JWKS>', 'the keys that sign them: a JWKS file path or https:// URL')
    .option('--obo-audience <AUDIENCE>', "the on-behalf-of tokens' aud")
    .option('--obo-email-claim <CLAIM>', `the claim holding the user's e-mail${byDefault('email')}`)
    .option(
      '--redact <FIELD[,FIELD...]>',
      `the fields withheld from its answers (each answered as null)${to === 'update' ? ', in place of those held' : ''}: ${REDACT_LIST}${byDefault('none')}`,
    )
    .option(
      '--limited-access <SETTING>',
      `${LIMITED_ACCESS_HELP}${byDefault(DEFAULT_LIMITED_ACCESS_SETTING)}`,
    );
}

export function accessCommands(root: Command, run: CliRun, stores: StoreOptions): void {
  /** A command of `group`: its own arguments and options (`own`), then --access-store and --json. */
  const under =
    (group: Command) =>
    <A extends unknown[], O extends OptionValues>(name: string, own: (command: Command) => Command<A, O>) =>
      own(group.command(name)).addOption(stores.accessStore()).addOption(jsonOption());
  const access = run.loads(work.access);

  const clients = under(root.command('clients'));
  clients('add', (c) =>
    clientSettings(
      c
        .argument('<CN>', 'the client name (its certificate subject CN)')
        .requiredOption('--permissions <P[,P...]>', CLIENT_PERMISSIONS),
      'add',
    ),
  ).action(access((m, cn, options) => m.clientsAdd(cn, options, run.io)));
  clients('update', (c) =>
    clientSettings(c.argument(...CN).option('--permissions <P[,P...]>', CLIENT_PERMISSIONS), 'update'),
  ).action(access((m, cn, options) => m.clientsUpdate(cn, options, run.io)));
  clients('list', (c) => c).action(access((m, options) => m.clientsList(options, run.io)));
  clients('show', (c) => c.argument(...CN)).action(
    access((m, cn, options) => m.clientsShow(cn, options, run.io)),
  );
  clients('suspend', (c) => c.argument(...CN)).action(access((m, cn, o) => m.clientsSuspend(cn, o, run.io)));
  clients('resume', (c) => c.argument(...CN)).action(access((m, cn, o) => m.clientsResume(cn, o, run.io)));
  clients('remove', (c) => c.argument(...CN)).action(access((m, cn, o) => m.clientsRemove(cn, o, run.io)));

  const keys = under(root.command('keys'));
  keys('issue', (c) =>
    c
      .argument(...CN)
      .option(
        '--expires-in <DURATION>',
        'how long it works, e.g. 30s, 15m, 12h or 90d (default: it does not expire)',
      ),
  ).action(access((m, cn, options) => m.keysIssue(cn, options, run.io)));
  keys('list', (c) => c.argument(...CN)).action(access((m, cn, options) => m.keysList(cn, options, run.io)));
  keys('revoke', (c) => c.argument('<KEY_ID>', 'the id of the key, as `keys list` shows it')).action(
    access((m, keyId, options) => m.keysRevoke(keyId, options, run.io)),
  );

  const certs = under(root.command('certs'));
  certs('sign', (c) =>
    c
      .argument('<CSR_FILE>', 'the certificate signing request, PEM or DER')
      .requiredOption('--client <CN>', "the client it is for: the CSR's subject CN, added with `clients add`")
      .option(
        '--days <N>',
        `days the certificate is valid, 1..397 (else CLIENT_CERT_DAYS, else ${DEFAULT_CLIENT_CERT_DAYS})`,
      )
      .option('--out <FILE>', 'write the certificate to FILE, which must not exist, instead of stdout'),
  ).action(run.loads(work.certsSign)((m, file, options) => m.certsSign(file, options, run.io)));
  certs('revoke', (c) =>
    c
      .argument('<SERIAL>', 'the serial, hexadecimal, e.g. 4F1A09 or 4f:1a:09')
      .option('--client <CN>', 'revoke it for this client only (default: for every client)'),
  ).action(access((m, serial, options) => m.certsRevoke(serial, options, run.io)));

  const grants = under(root.command('grants'));
  grants('add', (c) =>
    c
      .argument('<EMAIL>', "the user's e-mail address, as their on-behalf-of token holds it")
      .argument(...PERMISSIONS),
  ).action(access((m, email, list, options) => m.grantsAdd(email, list, options, run.io)));
  grants('remove', (c) => c.argument('<EMAIL>', "the user's e-mail address").argument(...PERMISSIONS)).action(
    access((m, email, list, options) => m.grantsRemove(email, list, options, run.io)),
  );
  grants('list', (c) => c).action(access((m, options) => m.grantsList(options, run.io)));
}
