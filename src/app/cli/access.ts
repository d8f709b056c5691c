// The commands that administer who may call the service, on the access store: `clients`,
// `keys`, `certs` and `grants`. Their work is in src/app/commands/access.ts (and
// certs-sign.ts), loaded when one runs.
import { type Command, Option } from '@commander-js/extra-typings';
import {
  DEFAULT_LIMITED_ACCESS_SETTING,
  LIMITED_ACCESS_SETTINGS,
} from '../../domain/access/limited-access.js';
import { REDACTABLE_FIELDS } from '../../domain/access/redaction.js';
import { DEFAULT_CLIENT_CERT_DAYS } from '../../domain/certificates/renew.js';
import { QueueArn, RoleArn } from '../../domain/queue/arns.js';
import { jsonOption, type StoreOptions } from './options.js';
import { type CliRun, example, PERMISSION_LIST } from './program.js';
import { work } from './work.js';

/** `FIELD[,FIELD...]`: the fields a client can have withheld, for the help of --redact. */
const REDACT_LIST = `none, or one or more of ${REDACTABLE_FIELDS.join(', ')}`;

/** `deny|allow`: a client's setting for limited-access cases, for the help of --limited-access. */
const LIMITED_ACCESS_HELP = `what it gets on a limited-access case when it acts as itself (no on-behalf-of user): ${LIMITED_ACCESS_SETTINGS.join(' or ')}; deny is refused (403), allow is answered and the client enforces the case's rules itself`;

export function accessCommands(root: Command, run: CliRun, stores: StoreOptions): void {
  const clients = root
    .command('clients')
    .summary('the consumer services that may call the service, each named by its certificate CN');
  clients
    .command('add')
    .summary('add a client with its permissions, and its queue, rate limit and on-behalf-of settings')
    .description(
      'Adds the client CN (the subject CN of the certificate it presents) with the operations it may call; optionally its SQS queue for POST /token, its rate limit, how the on-behalf-of tokens of its users are checked, the fields withheld from its answers, and what it gets on a limited-access case when it acts as itself. A client already held is refused. It takes effect on the next request; give it an API key with `keys issue`.',
    )
    .argument('<CN>', 'the client name (its certificate subject CN)')
    .requiredOption(
      '--permissions <P[,P...]>',
      `the operations it may call, comma-separated: ${PERMISSION_LIST}`,
    )
    .option(
      '--queue-arn <ARN>',
      `its SQS queue, read with the credentials of POST /token (with the issueQueueToken permission), e.g. ${QueueArn.example}`,
    )
    .option(
      '--role-arn <ARN>',
      `the IAM role POST /token assumes for its queue (else STS_ROLE_ARN), e.g. ${RoleArn.example}`,
    )
    .option(
      '--rate-limit <N/DURATION>',
      'at most N requests per DURATION for each of its API keys, e.g. 100/1s or 6000/1m (else RATE_LIMIT_DEFAULT)',
    )
    .addOption(
      new Option(
        '--obo <MODE>',
        "whether its requests carry a user's token in X-On-Behalf-Of: forbidden (one sent is refused, 400), optional or required (one missing is refused, 401); optional and required need --obo-issuer, --obo-jwks and --obo-audience, and such a token is checked with them",
      ).default('forbidden'),
    )
    .option('--obo-issuer <ISSUER>', "the on-behalf-of tokens' iss")
    .option('--obo-jwks <JWKS>', 'the keys that sign them: a JWKS file path or https:// URL')
    .option('--obo-audience <AUDIENCE>', "the on-behalf-of tokens' aud")
    .option('--obo-email-claim <CLAIM>', "the claim holding the user's e-mail (default: email)")
    .addOption(
      new Option(
        '--redact <FIELD[,FIELD...]>',
        `the fields withheld from its answers (each answered as null): ${REDACT_LIST}`,
      ).default('none'),
    )
    .addOption(
      new Option('--limited-access <SETTING>', LIMITED_ACCESS_HELP).default(DEFAULT_LIMITED_ACCESS_SETTING),
    )
    .addOption(stores.accessStore())
    .addOption(jsonOption())
    .addHelpText(
      'after',
      example(
        'case-read clients add client-b --permissions getCase,getHomeOfficeInterest --rate-limit 6000/1m',
        'case-read clients add client-c --permissions getCase --obo required --obo-issuer https://login.example --obo-jwks https://login.example/jwks.json --obo-audience case-read --redact communityManager.emailAddress',
      ),
    )
    .action(async (cn, options) => run.done(await (await work.access()).clientsAdd(cn, options, run.io)));
  clients
    .command('update')
    .summary("change the fields withheld from a client's answers, or its limited-access setting")
    .description(
      'Changes the fields withheld from the answers to the client CN, its limited-access setting, or both (one of the two is needed); the rest of the client is kept. It takes effect on the next request.',
    )
    .argument('<CN>', 'the client name')
    .option(
      '--redact <FIELD[,FIELD...]>',
      `the fields withheld from now on, in place of those held: ${REDACT_LIST}`,
    )
    .option('--limited-access <SETTING>', LIMITED_ACCESS_HELP)
    .addOption(stores.accessStore())
    .addOption(jsonOption())
    .addHelpText(
      'after',
      example(
        'case-read clients update client-b --redact communityManager.emailAddress,communityManager.teamPhoneNumber',
      ),
    )
    .action(async (cn, options) => run.done(await (await work.access()).clientsUpdate(cn, options, run.io)));
  clients
    .command('list')
    .summary('list the clients, with the certificate each last presented')
    .description(
      'Lists every client: whether it is suspended, its permissions, and the certificate it last presented to the service, with when it expires and the days it has left.',
    )
    .addOption(stores.accessStore())
    .addOption(jsonOption())
    .addHelpText('after', example('case-read clients list --access-store sqlite:/srv/case-read/access.db'))
    .action(async (options) => run.done(await (await work.access()).clientsList(options, run.io)));
  clients
    .command('show')
    .summary('show a client as held, and its API keys')
    .description(
      'Shows the client CN as held: its permissions, rate limit, queue, on-behalf-of settings, withheld fields and limited-access setting, and its API keys with the status of each (never the keys themselves).',
    )
    .argument('<CN>', 'the client name')
    .addOption(stores.accessStore())
    .addOption(jsonOption())
    .addHelpText('after', example('case-read clients show client-b'))
    .action(async (cn, options) => run.done(await (await work.access()).clientsShow(cn, options, run.io)));
  clients
    .command('suspend')
    .summary('refuse a client until it is resumed')
    .description(
      'Suspends the client CN: its requests are refused (403) from the next one on, until `clients resume`. Its settings and keys are kept.',
    )
    .argument('<CN>', 'the client name')
    .addOption(stores.accessStore())
    .addOption(jsonOption())
    .addHelpText('after', example('case-read clients suspend client-b'))
    .action(async (cn, options) => run.done(await (await work.access()).clientsSuspend(cn, options, run.io)));
  clients
    .command('resume')
    .summary('serve a suspended client again')
    .description(
      'Resumes the client CN, suspended by `clients suspend`: it is served again from the next request.',
    )
    .argument('<CN>', 'the client name')
    .addOption(stores.accessStore())
    .addOption(jsonOption())
    .addHelpText('after', example('case-read clients resume client-b'))
    .action(async (cn, options) => run.done(await (await work.access()).clientsResume(cn, options, run.io)));
  clients
    .command('remove')
    .summary('remove a client and its API keys')
    .description(
      'Removes the client CN and every API key it holds; its requests are refused from the next one on.',
    )
    .argument('<CN>', 'the client name')
    .addOption(stores.accessStore())
    .addOption(jsonOption())
    .addHelpText('after', example('case-read clients remove client-b'))
    .action(async (cn, options) => run.done(await (await work.access()).clientsRemove(cn, options, run.io)));

  const keys = root.command('keys').summary("a client's API keys: issue, list, revoke");
  keys
    .command('issue')
    .summary('issue an API key for a client, printed once')
    .description(
      'Issues a new API key for the client CN and prints it once, alone on its line; only its hash is stored, and it is not shown again. Keys issued before keep working: to rotate, issue one, then revoke the old one.',
    )
    .argument('<CN>', 'the client name')
    .option(
      '--expires-in <DURATION>',
      'how long it works, e.g. 30s, 15m, 12h or 90d (default: it does not expire)',
    )
    .addOption(stores.accessStore())
    .addOption(jsonOption())
    .addHelpText('after', example('case-read keys issue client-b --expires-in 90d'))
    .action(async (cn, options) => run.done(await (await work.access()).keysIssue(cn, options, run.io)));
  keys
    .command('list')
    .summary("list a client's API keys and their status")
    .description(
      "Lists the API keys of the client CN: each one's id, its status (active, active until a time, expired or revoked) and when it was created. The keys themselves are never shown.",
    )
    .argument('<CN>', 'the client name')
    .addOption(stores.accessStore())
    .addOption(jsonOption())
    .addHelpText('after', example('case-read keys list client-b'))
    .action(async (cn, options) => run.done(await (await work.access()).keysList(cn, options, run.io)));
  keys
    .command('revoke')
    .summary('revoke an API key')
    .description('Revokes the API key KEY_ID: it stops working on the next request.')
    .argument('<KEY_ID>', 'the id of the key, as `keys list` shows it')
    .addOption(stores.accessStore())
    .addOption(jsonOption())
    .addHelpText('after', example('case-read keys revoke KEY_ID'))
    .action(async (keyId, options) =>
      run.done(await (await work.access()).keysRevoke(keyId, options, run.io)),
    );

  const certs = root
    .command('certs')
    .summary("clients' certificates: sign a consumer's CSR, revoke a certificate");
  certs
    .command('sign')
    .summary("sign a consumer's CSR for a client, with the configured issuer")
    .description(
      "Signs the consumer's CSR_FILE (PEM or DER, made with `openssl req`), checked as EST simplereenroll checks one, for the client CN, which must be held and be the CSR's subject CN. The issuer is CLIENT_CERT_ISSUER's: local (CLIENT_CA_CERT, CLIENT_CA_KEY) or acm-pca (ACM_PCA_ARN); nothing else of serve's configuration is read. Only the consumer's public key passes through: its private key stays with it. The certificate PEM goes to --out FILE, else to stdout; --json reports what was written to FILE.",
    )
    .argument('<CSR_FILE>', 'the certificate signing request, PEM or DER')
    .requiredOption('--client <CN>', "the client it is for: the CSR's subject CN, added with `clients add`")
    .option(
      '--days <N>',
      `days the certificate is valid, 1..397 (else CLIENT_CERT_DAYS, else ${DEFAULT_CLIENT_CERT_DAYS})`,
    )
    .option('--out <FILE>', 'write the certificate to FILE, which must not exist, instead of stdout')
    .addOption(stores.accessStore())
    .addOption(jsonOption())
    .addHelpText('after', example('case-read certs sign client.csr --client client-b --out client.pem'))
    .action(async (file, options) =>
      run.done(await (await work.certsSign()).certsSign(file, options, run.io)),
    );
  certs
    .command('revoke')
    .summary('refuse a certificate, for one client or for every one')
    .description(
      'Revokes the certificate with serial SERIAL: it is refused from the next request on, on every runtime. With --client, only when that client presents it; else whoever does.',
    )
    .argument('<SERIAL>', 'the serial, hexadecimal, e.g. 4F1A09 or 4f:1a:09')
    .option('--client <CN>', 'revoke it for this client only (default: for every client)')
    .addOption(stores.accessStore())
    .addOption(jsonOption())
    .addHelpText('after', example('case-read certs revoke 4F1A09 --client client-b'))
    .action(async (serial, options) =>
      run.done(await (await work.access()).certsRevoke(serial, options, run.io)),
    );

  const grants = root
    .command('grants')
    .summary("the permissions an on-behalf-of user's requests are widened by");
  grants
    .command('add')
    .summary('grant an on-behalf-of user permissions')
    .description(
      "Grants the on-behalf-of user EMAIL (compared without regard to case) the permissions P: a client's request made for that user, with a verified token, may also call those operations. Grants widen operations, never the fields a client has withheld.",
    )
    .argument('<EMAIL>', "the user's e-mail address, as their on-behalf-of token holds it")
    .argument('<P[,P...]>', `the permissions, comma-separated: ${PERMISSION_LIST}`)
    .addOption(stores.accessStore())
    .addOption(jsonOption())
    .addHelpText('after', example('case-read grants add officer@probation.example getCommunityManagerByCrn'))
    .action(async (email, list, options) =>
      run.done(await (await work.access()).grantsAdd(email, list, options, run.io)),
    );
  grants
    .command('remove')
    .summary("take permissions from an on-behalf-of user's grants")
    .description(
      'Takes the permissions P from the grants of the on-behalf-of user EMAIL; any others granted are kept.',
    )
    .argument('<EMAIL>', "the user's e-mail address")
    .argument('<P[,P...]>', `the permissions, comma-separated: ${PERMISSION_LIST}`)
    .addOption(stores.accessStore())
    .addOption(jsonOption())
    .addHelpText(
      'after',
      example('case-read grants remove officer@probation.example getCommunityManagerByCrn'),
    )
    .action(async (email, list, options) =>
      run.done(await (await work.access()).grantsRemove(email, list, options, run.io)),
    );
  grants
    .command('list')
    .summary('list the on-behalf-of users granted permissions')
    .description('Lists every on-behalf-of user that holds grants, with their permissions.')
    .addOption(stores.accessStore())
    .addOption(jsonOption())
    .addHelpText('after', example('case-read grants list'))
    .action(async (options) => run.done(await (await work.access()).grantsList(options, run.io)));
}
