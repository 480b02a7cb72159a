/** A small element builder: the console writes its DOM with properties, never with HTML strings. */
type Child = Node | string | null | undefined | false;

export interface ElementOptions {
  className?: string;
  text?: string;
  attrs?: Record<string, string>;
  on?: Partial<Record<keyof HTMLElementEventMap, (event: Event) => void>>;
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  options: ElementOptions = {},
  children: Child[] = [],
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (options.className) element.className = options.className;
  if (options.text !== undefined) element.textContent = options.text;
  for (const [name, value] of Object.entries(options.attrs ?? {}))
    element.setAttribute(name, value);
  for (const [type, listener] of Object.entries(options.on ?? {})) {
    element.addEventListener(type, listener as EventListener);
  }
  for (const child of children) {
    if (child !== null && child !== undefined && child !== false) element.append(child);
  }
  return element;
}

/** A button that is not a form's submit button. */
export function button(
  text: string,
  onClick: () => void,
  attrs: Record<string, string> = {},
): HTMLButtonElement {
  return h('button', { text, attrs: { type: 'button', ...attrs }, on: { click: onClick } });
}

const SVG_NS = 'http://www.w3.org/2000/svg';

export function svg(tag: string, attrs: Record<string, string> = {}): SVGElement {
  const element = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, value);
  return element;
}

/** Offers `blob` as a download named `name`. */
export function download(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = h('a', { attrs: { href: url, download: name } });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * A tab list that follows the WAI-ARIA pattern: arrow keys, Home and End move between tabs, and the
 * chosen tab's panel shows.
 */
export function tabList(
  label: string,
  tabs: { id: string; title: string; className?: string }[],
  select: (id: string) => void,
): { element: HTMLElement; setSelected(id: string): void } {
  const buttons = tabs.map((tab) =>
    h('button', {
      className: `tab ${tab.className ?? ''}`.trim(),
      text: tab.title,
      attrs: {
        role: 'tab',
        type: 'button',
        id: `tab-${tab.id}`,
        'aria-controls': `panel-${tab.id}`,
      },
      on: { click: () => select(tab.id) },
    }),
  );
  const element = h(
    'div',
    { className: 'tabs', attrs: { role: 'tablist', 'aria-label': label } },
    buttons,
  );
  element.addEventListener('keydown', (event) => {
    const current = buttons.indexOf(document.activeElement as HTMLButtonElement);
    if (current < 0) return;
    const next =
      event.key === 'ArrowRight'
        ? (current + 1) % buttons.length
        : event.key === 'ArrowLeft'
          ? (current - 1 + buttons.length) % buttons.length
          : event.key === 'Home'
            ? 0
            : event.key === 'End'
              ? buttons.length - 1
              : -1;
    if (next < 0) return;
    event.preventDefault();
    buttons[next]?.focus();
    const tab = tabs[next];
    if (tab) select(tab.id);
  });
  return {
    element,
    setSelected(id) {
      tabs.forEach((tab, index) => {
        const button = buttons[index] as HTMLButtonElement;
        const selected = tab.id === id;
        button.setAttribute('aria-selected', String(selected));
        button.tabIndex = selected ? 0 : -1;
      });
    },
  };
}

/** A message that shows for a few seconds in a corner (an export refused or failed, a warning). */
export function toast(message: string): void {
  const banner = h('div', { className: 'toast', attrs: { role: 'alert' }, text: message });
  document.body.append(banner);
  setTimeout(() => banner.remove(), 8000);
}
