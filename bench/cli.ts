/**
 * The benches' command line, one way for all: `--name value` or `--name=value` for the options
 * a bench names, bare switches (`--no-floor`), `--help` prints its usage. A name the bench does
 * not know, a value missing, or an integer out of range stops the bench with the usage.
 * (node:util parseArgs would do the splitting, but not the integer checks and the usage on
 * every refusal that the benches print; this is the shared 30 lines instead of five copies.)
 */
export interface Flags {
  /** The value given for an option, or undefined. */
  value(name: string): string | undefined;
  /** Whether a switch was given. */
  has(name: string): boolean;
  /** An option's integer value (at least `min`), or undefined when not given. */
  int(name: string, min?: number): number | undefined;
}

export function readFlags(argv: string[], usage: string, known: { values: string[]; switches?: string[] }): Flags {
  const values = new Map<string, string>();
  const switches = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') {
      console.log(usage);
      process.exit(0);
    }
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}\n${usage}`);
    const [k, inline] = a.slice(2).split(/=(.*)/s, 2);
    if (known.switches?.includes(k)) switches.add(k);
    else if (!known.values.includes(k)) throw new Error(`unknown option --${k}\n${usage}`);
    else if (inline !== undefined) values.set(k, inline);
    else if (i + 1 < argv.length) values.set(k, argv[++i]);
    else throw new Error(`--${k} needs a value\n${usage}`);
  }
  return {
    value: (k) => values.get(k),
    has: (k) => switches.has(k),
    int: (k, min = 1) => {
      const v = values.get(k);
      if (v === undefined) return undefined;
      const n = Number(v);
      if (!Number.isInteger(n) || n < min) throw new Error(`--${k} must be an integer >= ${min}, got "${v}"`);
      return n;
    },
  };
}
