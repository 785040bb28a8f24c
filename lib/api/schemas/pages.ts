/** List queries (`?offset=&limit=&order=`) and the pages they answer with. */
import { Type, type TObject, type TProperties, type TSchema } from '@sinclair/typebox';
import { OneOf, WholeNumber } from './common.js';
import { MAX_PAGE } from '../page.js';

export const DEFAULT_PAGE = 100;
export { MAX_PAGE };

export const PAGE_QUERY = {
  offset: Type.Optional(WholeNumber(0, Number.MAX_SAFE_INTEGER, 'How many to skip; default 0.')),
  limit: Type.Optional(WholeNumber(1, MAX_PAGE, `How many to return; default ${DEFAULT_PAGE}.`)),
  order: Type.Optional(OneOf(['asc', 'desc'] as const, { description: '`desc` lists newest first.' })),
};

/** A list's query: the page fields and `extra` ones; any other parameter is a 400 naming it (validate.ts). */
export function ListQuery<P extends TProperties>(extra: P): TObject<typeof PAGE_QUERY & P> {
  return Type.Object({ ...PAGE_QUERY, ...extra });
}

export const PageQuerySchema = ListQuery({});

export function PageOf<T extends TSchema>(item: T, $id: string) {
  return Type.Object(
    {
      data: Type.Array(item),
      total: Type.Integer({ minimum: 0 }),
      offset: Type.Integer({ minimum: 0 }),
      limit: Type.Integer({ minimum: 0 }),
    },
    { $id },
  );
}
