/**
 * The layer rules of the hexagon (see README "Architecture"). `npm test` fails on any
 * violation.
 */
module.exports = {
  forbidden: [
    {
      name: 'tlog-stands-alone',
      severity: 'error',
      comment:
        'src/tlog is a transparency log of its own (RFC 9162 trees, C2SP signed notes, checkpoints, tiles and proofs; docs/decisions/0020): it imports nothing outside itself, not even node:*, and knows nothing of cases. It could be lifted into a package as it is.',
      from: { path: '^src/tlog/' },
      to: { pathNot: '^src/tlog/' },
    },
    {
      name: 'domain-is-pure',
      severity: 'error',
      comment:
        'src/domain imports nothing outside src/domain but the port interfaces it needs and the transparency log (src/tlog, as pure as it): no framework, no driver, no node:* module.',
      from: { path: '^src/domain/' },
      to: { pathNot: ['^src/domain/', '^src/ports/', '^src/tlog/'] },
    },
    {
      name: 'domain-knows-ports-as-types',
      severity: 'error',
      comment:
        'The domain names the ports it needs (src/ports, their one home) by type only: no code of theirs runs in it.',
      from: { path: '^src/domain/' },
      to: { path: '^src/ports/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'ports-only-know-the-domain',
      severity: 'error',
      comment:
        'src/ports declares interfaces over domain types; it never imports an adapter, the app, or a library.',
      from: { path: '^src/ports/' },
      to: { pathNot: ['^src/ports/', '^src/domain/', '^src/tlog/'] },
    },
    {
      name: 'formats-know-only-the-domain',
      severity: 'error',
      comment:
        "src/formats holds the file formats the service reads (the case file): any adapter or command may read them, so they import nothing of src/adapters or src/app, only the domain, the ports' types and the libraries they parse with.",
      from: { path: '^src/formats/' },
      to: { path: ['^src/adapters/', '^src/app/'] },
    },
    {
      name: 'adapters-do-not-reach-the-app',
      severity: 'error',
      comment: 'Adapters are composed by src/app; they never import it.',
      from: { path: '^src/adapters/' },
      to: { path: '^src/app/' },
    },
    {
      name: 'only-the-composition-root-chooses-adapters',
      severity: 'error',
      comment:
        'Adapters are chosen and wired in src/app/composition (the service, the configuration, the store kinds, the listener, and what the operator commands use); the rest of src/app reaches them only through it, src/adapters/shared included.',
      from: { path: '^src/app/', pathNot: '^src/app/composition/' },
      to: { path: '^src/adapters/' },
    },
    {
      name: 'only-entry-points-call-the-composition-root',
      severity: 'error',
      comment:
        'src/app/composition composes; the application work beside it (src/app/audit, the TLS reload, the stores registry, the command tree src/app/cli/, …) is handed what it needs and never reaches up into it. Only the entry points do: the CLI (src/app/cli.ts) and its commands (src/app/commands/).',
      from: {
        path: '^src/app/',
        pathNot: ['^src/app/composition/', '^src/app/commands/', '^src/app/cli/', '^src/app/cli\\.ts$'],
      },
      to: { path: '^src/app/composition/' },
    },
    {
      name: 'the-command-tree-does-not-compose',
      severity: 'error',
      comment:
        "The CLI's tree (src/app/cli/) describes the commands: their names, options, help and which work each runs. It is built on every run, --help included, so it never imports the composition root (src/app/composition/): what it says of the stores is handed to it by the entry point (src/app/cli.ts), and what a command composes is loaded by that command's work (src/app/commands/) when it runs.",
      from: { path: '^src/app/cli/' },
      to: { path: '^src/app/composition/' },
    },
    {
      name: 'the-command-tree-loads-commands-when-they-run',
      severity: 'error',
      comment:
        "The CLI's tree (src/app/cli/) defines every command and is built on every run, --help included; a command's work (src/app/commands/) is imported by its action when it runs, so one command never loads what another uses (a database driver, the HTTP app, the AWS SDK). Only the exit statuses and the Io are imported statically.",
      from: { path: '^src/app/cli/' },
      to: {
        path: '^src/app/commands/',
        pathNot: ['^src/app/commands/exit\\.ts$', '^src/app/commands/io\\.ts$'],
        dynamic: false,
      },
    },
    {
      name: 'the-witness-stands-apart',
      severity: 'error',
      comment:
        'The witness an oversight body runs (case-read witness serve: src/app/witness, its composition src/app/composition/witness.ts and its state adapters) is a composition of its own (decisions §19): only its command loads it, so serve, its request path and the other commands never do.',
      from: {
        pathNot: [
          '^src/app/witness/',
          '^src/app/composition/witness\\.ts$',
          '^src/app/commands/witness\\.ts$',
        ],
      },
      to: {
        path: [
          '^src/app/witness/',
          '^src/app/composition/witness\\.ts$',
          '^src/adapters/[^/]+/witness-(state|metrics)\\.ts$',
        ],
      },
    },
    {
      name: 'adapters-are-independent',
      severity: 'error',
      comment:
        'One adapter folder never imports another (the composition root wires them). Two exceptions: the problem types of the HTTP API (plain data), which the upstream store reads in an upstream’s answers, and src/adapters/shared, small helpers of no technology of their own (SHA-256).',
      from: { path: '^src/adapters/([^/]+)/' },
      to: {
        path: '^src/adapters/',
        pathNot: ['^src/adapters/$1/', '^src/adapters/http/problem-types\\.ts$', '^src/adapters/shared/'],
      },
    },
    {
      name: 'http-adapter-is-runtime-portable',
      severity: 'error',
      comment:
        'The Hono app runs on any runtime: no node:* modules and no native drivers in src/adapters/http.',
      from: { path: '^src/adapters/http/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'src-never-imports-tests',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench|scripts)/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: {},
      // node:sqlite is built into Deno and Node 22.5+, not into the Node 20 this runs on; the
      // SQLite driver seam loads it only where it exists.
      to: { couldNotResolve: true, pathNot: '^node:sqlite$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
