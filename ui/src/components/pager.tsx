/** Previous / next over a list the server pages by offset and limit, and where in it the page is. */
export function Pager({ offset, size, total, go }: { offset: number; size: number; total: number; go: (offset: number) => void }) {
  return (
    <div class="row pager">
      <button type="button" class="small" disabled={offset === 0} onClick={() => go(Math.max(0, offset - size))}>
        Previous {size}
      </button>
      <span class="count">
        {Math.min(offset + 1, total).toLocaleString('en')}–{Math.min(offset + size, total).toLocaleString('en')} of {total.toLocaleString('en')}
      </span>
      <button type="button" class="small" disabled={offset + size >= total} onClick={() => go(offset + size)}>
        Next {size}
      </button>
    </div>
  );
}
