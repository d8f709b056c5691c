/**
 * A client's name: the common name (CN) of its certificate, as registered with
 * `clients add` and issued by `pki client`. 1–64 characters, letters, digits, dot,
 * underscore and hyphen, starting with a letter or digit: a name that is safe in a file
 * name, a log line and an STS session name alike.
 */
export type ClientName = string & { readonly __brand: 'ClientName' };

const PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export const ClientName = {
  tryParse(raw: string): ClientName | undefined {
    return PATTERN.test(raw) ? (raw as ClientName) : undefined;
  },

  /** The name; throws `Error` naming the rule. */
  parse(raw: string): ClientName {
    const name = ClientName.tryParse(raw);
    if (name === undefined) {
      throw new Error('CN must be 1-64 characters: letters, digits, dot, underscore, hyphen');
    }
    return name;
  },
};
