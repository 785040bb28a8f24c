import type { ComponentChildren } from 'preact';
import { navigate } from '../router.js';

/** A real link (middle-click, copy address work) that moves within the page on a plain click. */
export function Link({ href, children, class: cls }: { href: string; children: ComponentChildren; class?: string }) {
  return (
    <a
      href={href}
      class={cls}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}
