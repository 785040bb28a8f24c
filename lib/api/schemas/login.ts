/** `POST /api/ui_link` and `GET /login`: how the dashboard signs in. */
import { Type } from '@sinclair/typebox';

export const UiLinkReplySchema = Type.Object(
  { url: Type.String({ description: 'With a token, a one-time link (a minute) that sets the token cookie; without, the dashboard.' }) },
  { $id: 'UiLinkReply', additionalProperties: false },
);

/** `POST /api/ui_link` takes nothing: no body, or an empty object (a field would be dropped unseen, as nowhere else). */
export const UiLinkBodySchema = Type.Object({}, { additionalProperties: false });

export const LoginQuerySchema = Type.Object({ code: Type.Optional(Type.String()) });
