// The commands that set a machine up for development and fill a case store: `pki`, `cases`,
// `tokens`: what each says in its help (OPERATOR_WORDS), then the tree of them. Their work is
// in src/app/commands/{pki,cases,tokens}.ts, loaded when one runs (work.ts).
import { type Command, Option, type OptionValues } from '@commander-js/extra-typings';
import { MAX_GENERATED_CASES } from '../generate.js';
import { jsonOption, type StoreOptions } from './options.js';
import type { CliRun, WordsByPath } from './program.js';
import { work } from './work.js';

export const OPERATOR_WORDS: WordsByPath = {
  pki: {
    summary: 'a development PKI: a CA, a server certificate, client certificates, a token issuer',
  },
  'pki init': {
    summary: 'create a development CA, a server certificate for localhost and a token issuer',
    description:
      'Creates, in DIR, a development CA (ca.pem: TLS_CLIENT_CA), a server certificate for localhost (server.pem: TLS_CERT), and a development token issuer (jwks.json: BEARER_JWKS). Private keys are written readable by their owner only. Refuses a directory already initialised.',
    examples: ['case-read pki init --dir .dev/pki'],
  },
  'pki client': {
    summary: 'issue a client certificate and key signed by the development CA',
    description:
      'Issues DIR/CN.pem and DIR/CN-key.pem: a client certificate for CN, signed by the CA of `pki init`.',
    examples: ['case-read pki client client-a --dir .dev/pki --days 30'],
  },
  cases: {
    summary: 'fill a case store, and show what it holds',
  },
  'cases import': {
    summary: 'import cases from JSON files into a case store',
    description:
      'Reads and validates every FILE (the format of fixtures/cases.json) before anything is written, then writes the cases; a case already held is replaced.',
    examples: ['case-read cases import fixtures/cases.json --store sqlite:data/cases.db'],
  },
  'cases generate': {
    summary: 'write N synthetic cases to a case store',
    description:
      'Generates N synthetic cases (never real personal data) from a seed: the same seed gives the same cases.',
    examples: ['case-read cases generate --count 100000 --seed 7 --store sqlite:data/cases.db'],
  },
  'cases access': {
    summary: "show a case's limited-access rules as held",
    description: 'Shows the exclusions and restriction held for the case CRN, each marked active or ended.',
    examples: ['case-read cases access X123456 --store sqlite:data/cases.db'],
  },
  tokens: {
    summary: 'bearer tokens from the development issuer',
  },
  'tokens mint': {
    summary: 'mint a bearer token for a client from the development issuer',
    description:
      "Mints a bearer token from the issuer of `pki init`, for iss BEARER_ISSUER and aud BEARER_AUDIENCE (else the development issuer's), and prints it alone on its line.",
    examples: [
      'case-read tokens mint --client client-a --dir .dev/pki --expires-in 12h --bind-cert .dev/pki/client-a.pem',
    ],
  },
};

export function operatorCommands(root: Command, run: CliRun, stores: StoreOptions): void {
  const pki = run.loads(work.pki);
  const cases = run.loads(work.cases);

  const pkiGroup = root.command('pki');
  pkiGroup
    .command('init')
    .requiredOption('--dir <DIR>', 'the directory to create the PKI in')
    .addOption(jsonOption())
    .action(pki((m, options) => m.init(options, run.io)));
  pkiGroup
    .command('client')
    .argument('<CN>', 'the client name (its certificate subject CN)')
    .requiredOption('--dir <DIR>', 'the directory of `pki init`')
    .addOption(new Option('--days <N>', 'days the certificate is valid').default('365'))
    .addOption(jsonOption())
    .action(pki((m, cn, options) => m.client(cn, options, run.io)));

  const casesGroup = root.command('cases');
  /** A `cases` command: its own arguments and options, then --store (`what` it is to it) and --json. */
  const onCases = <A extends unknown[], O extends OptionValues>(
    name: string,
    what: string,
    own: (command: Command) => Command<A, O>,
  ) => own(casesGroup.command(name)).addOption(stores.caseStore(what)).addOption(jsonOption());
  onCases('import', 'the store to write to', (c) => c.argument('<FILE...>', 'JSON files of cases')).action(
    cases((m, files, options) => m.importCases(files, options, run.io)),
  );
  onCases('generate', 'the store to write to', (c) =>
    c
      .requiredOption('--count <N>', `how many cases, 1..${MAX_GENERATED_CASES}`)
      .addOption(new Option('--seed <S>', 'the seed, 0..4294967295').default('1')),
  ).action(cases((m, options) => m.generate(options, run.io)));
  onCases('access', 'the store to read', (c) => c.argument('<CRN>', 'the case reference number')).action(
    cases((m, crn, options) => m.access(crn, options, run.io)),
  );

  root
    .command('tokens')
    .command('mint')
    .requiredOption('--client <CN>', 'the client the token is for (its sub)')
    .addOption(new Option('--dir <DIR>', 'the directory of `pki init`').default('.dev'))
    .addOption(new Option('--expires-in <DURATION>', 'how long it lasts, e.g. 15m, 12h').default('1h'))
    .option('--bind-cert <PEM>', 'bind the token to this client certificate (its cnf x5t#S256)')
    .addOption(jsonOption())
    .action(run.loads(work.tokens)((m, options) => m.mint(options, run.io)));
}
