/**
 * The "Copy link" control of the query view: the link (share-link.ts) that opens the given SQL,
 * copied to the clipboard when the browser allows it, and shown in a read-only field to copy by
 * hand when it does not (the clipboard needs a secure context: https or this machine).
 */
import { button, h, toast } from './dom';
import { shareLink, sqlOfFragment } from './share-link';

export class ShareView {
  readonly element: HTMLElement;
  private readonly output = h('input', {
    className: 'share-link',
    attrs: {
      type: 'text',
      readonly: '',
      hidden: '',
      'aria-label': 'Link to this SQL',
      'data-testid': 'share-link',
    },
  });

  constructor(currentSql: () => string) {
    this.element = h('span', { className: 'share' }, [
      button('Copy link', () => void this.offer(currentSql()), {
        'data-action': 'copy-link',
        title:
          'A link that opens this SQL in the console: the SQL only, never a connection or a password',
      }),
      this.output,
    ]);
  }

  async offer(sql: string): Promise<void> {
    const made = shareLink(location.href, sql);
    if ('refused' in made) {
      this.output.hidden = true;
      toast(made.refused);
      return;
    }
    this.output.value = made.link;
    this.output.hidden = false;
    this.output.select();
    try {
      await navigator.clipboard.writeText(made.link);
      toast('Link copied: it carries the SQL only');
    } catch {
      toast('Copy the link from the field next to the button');
    }
  }
}

/**
 * The SQL of the link the page was opened with, if any; the fragment is then taken out of the
 * address, so that a reload keeps what the editor holds since.
 */
export function sqlOfPageLink(): string | undefined {
  const found = sqlOfFragment(location.hash);
  if (found === undefined) return undefined;
  history.replaceState(null, '', `${location.pathname}${location.search}`);
  if ('error' in found) {
    toast(found.error);
    return undefined;
  }
  return found.sql;
}
