/**
 * One-time codes for `platform ui`'s link, as Jupyter's token links: the CLI (holding the token) asks for a code,
 * the browser opens `/login?code=...` once, and the daemon answers with the token as an HttpOnly, SameSite=Strict
 * cookie. The link is no secret worth stealing afterwards: used once, or a minute old, it opens nothing.
 */
import { randomBytes } from 'node:crypto';

const CODE_TTL_MS = 60_000;

export class LoginCodes {
  private readonly codes = new Map<string, number>();

  issue(now = Date.now()): string {
    for (const [code, expires] of this.codes) if (expires <= now) this.codes.delete(code);
    const code = randomBytes(24).toString('base64url');
    this.codes.set(code, now + CODE_TTL_MS);
    return code;
  }

  /** True once for a code issued less than a minute ago. */
  redeem(code: string, now = Date.now()): boolean {
    const expires = this.codes.get(code);
    this.codes.delete(code);
    return expires !== undefined && expires > now;
  }
}
