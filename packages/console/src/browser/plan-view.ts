/**
 * A plan on screen (plan.ts): a tree of nested, collapsible nodes, each with its type and target,
 * estimated rows against actual rows × loops, total and exclusive time and buffers, the slowest
 * marked; above it the planning and execution times, and, for an EXPLAIN ANALYZE that may write,
 * that it ran inside a transaction that was rolled back.
 */
import { h } from './dom';
import { explainRequest, formatMs, type Plan, type PlanNode } from './plan';
import {
  fetchPlan,
  type ExplainAnswer,
  type PlanRequest,
  type RequestTarget,
} from './inspect-requests';

/** What the plan view says of a plan whose request Cancel or Close stopped. */
export const PLAN_CANCELLED = 'Cancelled: the statement was stopped before its plan came back';

export class PlanView {
  readonly element = h('section', {
    className: 'plan-view',
    attrs: { 'aria-label': 'Plan', 'data-testid': 'plan-view', hidden: '' },
  });

  /** The request under way, and whether Cancel or Close stopped it. */
  private running: { request: PlanRequest; stopped: boolean } | undefined;

  /**
   * Explains `statement` on `target` and shows its plan, or why there is none; `note` says what
   * was left out (the other statements of a selection).
   */
  async explain(
    target: RequestTarget,
    statement: string,
    analyze: boolean,
    note?: string,
  ): Promise<void> {
    const title = analyze ? 'Explain analyze' : 'Explain';
    this.showLoading(title);
    const running = {
      request: fetchPlan(target, explainRequest(statement, analyze, target.readOnly)),
      stopped: false,
    };
    this.running = running;
    let shown: () => void;
    try {
      const answer = await running.request.done;
      shown = () => this.showPlan(title, answer, note);
    } catch (error) {
      const message = running.stopped ? PLAN_CANCELLED : (error as Error).message;
      shown = () => this.showError(title, message);
    }
    // Closed, or another plan asked for since: this answer is not shown.
    if (this.running !== running) return;
    this.running = undefined;
    shown();
  }

  /** Whether a plan's request is under way. */
  isRunning(): boolean {
    return this.running !== undefined;
  }

  /** Stops the plan's request under way, as Cancel stops a run; the view says it was cancelled. */
  async cancel(): Promise<void> {
    const running = this.running;
    if (!running || running.stopped) return;
    running.stopped = true;
    await running.request.cancel();
  }

  /** Closes the view; a plan still being made is cancelled (its statement stops). */
  hide(): void {
    void this.cancel();
    this.running = undefined;
    this.element.hidden = true;
    this.element.replaceChildren();
  }

  showLoading(title: string): void {
    this.element.hidden = false;
    this.element.replaceChildren(
      this.header(title),
      h('p', { className: 'plan-status', attrs: { role: 'status' }, text: 'Explaining…' }),
    );
  }

  showError(title: string, message: string): void {
    this.element.hidden = false;
    this.element.replaceChildren(
      this.header(title),
      h('p', { className: 'plan-error', attrs: { role: 'alert' }, text: message }),
    );
  }

  showPlan(title: string, answer: ExplainAnswer, note?: string): void {
    const { plan, rolledBack } = answer;
    this.element.hidden = false;
    this.element.replaceChildren(
      this.header(title),
      ...(note
        ? [h('p', { className: 'plan-note', attrs: { 'data-testid': 'plan-note' }, text: note })]
        : []),
      h('p', { className: 'plan-summary', attrs: { 'data-testid': 'plan-summary' } }, [
        timings(plan),
        rolledBack
          ? h('strong', {
              className: 'plan-rolled-back',
              attrs: { 'data-testid': 'plan-rolled-back' },
              text:
                'The statement ran inside a transaction that was rolled back: nothing it wrote was ' +
                'kept, but sequence values it took (nextval, serial columns) are not given back.',
            })
          : null,
      ]),
      h('ul', { className: 'plan-tree' }, [nodeItem(plan.root, plan)]),
    );
  }

  private header(title: string): HTMLElement {
    return h('div', { className: 'plan-head' }, [
      h('h2', { text: title }),
      h('button', {
        text: 'Close',
        attrs: { type: 'button', 'aria-label': 'Close the plan' },
        on: { click: () => this.hide() },
      }),
    ]);
  }
}

function timings(plan: Plan): string {
  const parts: string[] = [];
  if (plan.planningMs !== undefined) parts.push(`Planning ${formatMs(plan.planningMs)}`);
  if (plan.executionMs !== undefined) parts.push(`Execution ${formatMs(plan.executionMs)}`);
  if (!plan.analyzed) parts.push('Estimates only: Explain analyze runs the statement');
  return `${parts.join(' · ')} `;
}

function rowsText(node: PlanNode): string {
  const estimated = `est. ${node.estimatedRows.toLocaleString('en')} rows`;
  if (node.actualRows === undefined) return `${estimated} · cost ${node.totalCost.toFixed(2)}`;
  const loops = node.loops !== undefined && node.loops !== 1 ? ` × ${node.loops} loops` : '';
  return `${estimated} · actual ${node.actualRows.toLocaleString('en')} rows${loops}`;
}

function timeText(node: PlanNode, plan: Plan): string | null {
  if (node.totalMs === undefined || node.exclusiveMs === undefined) return null;
  const whole = plan.root.totalMs ?? 0;
  const share = whole > 0 ? ` (${Math.round((node.exclusiveMs / whole) * 100)}%)` : '';
  return `${formatMs(node.totalMs)} total · ${formatMs(node.exclusiveMs)} self${share}`;
}

function nodeItem(node: PlanNode, plan: Plan): HTMLElement {
  const attrs: Record<string, string> = { 'data-node-type': node.nodeType };
  if (node.actualRows !== undefined) attrs['data-actual-rows'] = String(node.actualRows);
  if (node.slow) attrs['data-slow'] = 'yes';
  const time = timeText(node, plan);
  const line = h('span', { className: 'plan-line' }, [
    h('strong', { className: 'plan-type', text: node.nodeType }),
    node.target ? h('span', { className: 'plan-target', text: node.target }) : null,
    h('span', { className: 'plan-rows', text: rowsText(node) }),
    time ? h('span', { className: 'plan-time', text: time }) : null,
    node.buffers
      ? h('span', { className: 'plan-buffers', text: `buffers: ${node.buffers}` })
      : null,
    node.slow ? h('span', { className: 'plan-slow-badge', text: 'slow' }) : null,
  ]);
  const details = node.details.map((detail) => h('li', { className: 'plan-detail', text: detail }));
  const children = node.children.map((child) => nodeItem(child, plan));
  if (details.length + children.length === 0) {
    return h('li', { className: `plan-node${node.slow ? ' slow' : ''}`, attrs }, [line]);
  }
  return h('li', { className: `plan-node${node.slow ? ' slow' : ''}`, attrs }, [
    h('details', { attrs: { open: '' } }, [
      h('summary', {}, [line]),
      details.length > 0 ? h('ul', { className: 'plan-details' }, details) : null,
      children.length > 0 ? h('ul', { className: 'plan-children' }, children) : null,
    ]),
  ]);
}
