/**
 * What a job's recorded fingerprint accepts. A recorded `C|L` holds the job to its canonical fingerprint C and also
 * takes builds made under L, the fingerprint the same definition had before session 31 (env hashed in file order):
 * so the upgrade that sorted the keys, and a reorder after it, make nothing stale. A split's `a+b` accepts no single
 * build (all it built turns stale, conservatively), as before.
 */

const OR = '|';

/** The value recorded for a definition: its canonical fingerprint, and its legacy one where that differs. */
export function acceptedFingerprints(canonical: string, legacy: string | undefined): string {
  return legacy && legacy !== canonical ? `${canonical}${OR}${legacy}` : canonical;
}

/** Whether a build made under `fingerprint` is of the definition `recorded` holds the job to. */
export function fingerprintAccepted(recorded: string, fingerprint: string): boolean {
  return recorded === fingerprint || recorded.split(OR).includes(fingerprint);
}

/** The fingerprints a recorded value names, its alternatives and a split's parts alike. */
export function fingerprintsNamed(recorded: string): string[] {
  return recorded.split(/[|+]/);
}

/** The canonical fingerprint of a recorded value, what a reason names. */
export function canonicalFingerprint(recorded: string): string {
  return recorded.split(OR)[0]!;
}
