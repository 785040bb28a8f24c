import { Router } from 'express';
import { HttpError } from '../http-error.js';
import { TOKEN_COOKIE } from '../access-guard.js';
import type { ServerContext } from '../server-context.js';
import { UiLinkBodySchema } from '../../api/schemas/login.js';
import { validateOptionalBody } from '../validate.js';

/**
 * `POST /api/ui_link`: the dashboard's URL for `platform ui`: with a token, a one-time link that sets the token
 * cookie; without, the dashboard itself. `GET /login?code=`: redeems such a link.
 */
export function loginRoutes({ access }: ServerContext): Router {
  const router = Router();
  router.post('/api/ui_link', (req, res) => {
    validateOptionalBody(UiLinkBodySchema, req.body, { what: 'POST /api/ui_link', example: '{} (or no body)' });
    const base = `${req.protocol}://${req.get('Host')}`;
    res.json({ url: access.token ? `${base}/login?code=${access.codes.issue()}` : `${base}/` });
  });
  router.get('/login', (req, res) => {
    const code = typeof req.query.code === 'string' ? req.query.code : '';
    if (!access.token || !access.codes.redeem(code)) {
      throw new HttpError(401, 'This dashboard link was used already or is over a minute old; run `platform ui` for a new one.');
    }
    res.cookie(TOKEN_COOKIE, access.token, { httpOnly: true, sameSite: 'strict', path: '/' });
    res.redirect(303, '/');
  });
  return router;
}
