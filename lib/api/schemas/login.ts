/** `POST /api/ui_link` and `GET /login`: how the dashboard signs in. */
import { Type } from '@sinclair/typebox';

export const UiLinkReplySchema = Type.Object(
  { url: Type.String({ description: 'With a token, a one-time link (a minute) that sets the token cookie; without, the dashboard.' }) },
  { $id: 'UiLinkReply', additionalProperties: false },
);

export const LoginQuerySchema = Type.Object({ code: Type.Optional(Type.String()) });
