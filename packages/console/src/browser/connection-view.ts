/**
 * The connection form: every field of a query request but the SQL, saved connections, and a "Test
 * connection" button (POST /api/test-connection). Two ways in, as tabs: the database's own
 * credentials, or a key or JWT with the name of a connection the server holds (docs/access.md).
 */
import {
  connectionFields,
  credentialHeaders,
  savedName,
  FormError,
  ISOLATION_LEVELS,
  ROW_MODES,
  SSL_MODES,
  usesKey,
  type ConnectionForm,
  type LoginMethod,
} from './request-fields';
import { postJson } from './api';
import { pageConnection, pageConnectionNames, withPageConnection } from './page-connection';
import type { FormField } from './connection-problems';
import { retryAfterSeconds, retryAfterText } from './results';
import { button, h, tabList } from './dom';
import type { ConsoleStorage } from './storage';

type TextField = {
  [K in keyof ConnectionForm]: ConnectionForm[K] extends string ? K : never;
}[keyof ConnectionForm];
type BoxField = {
  [K in keyof ConnectionForm]: ConnectionForm[K] extends boolean ? K : never;
}[keyof ConnectionForm];

interface FieldSpec {
  field: TextField;
  label: string;
  type?: string;
  choices?: readonly string[];
  hint?: string;
  autocomplete?: string;
}

const NAME_FIELD: FieldSpec = {
  field: 'name',
  label: 'Name',
  hint: 'how this connection is saved',
};

const CREDENTIAL_FIELDS: FieldSpec[] = [
  { field: 'host', label: 'Host', autocomplete: 'off' },
  { field: 'port', label: 'Port', type: 'number' },
  { field: 'database', label: 'Database' },
  { field: 'user', label: 'User', autocomplete: 'username' },
  { field: 'password', label: 'Password', type: 'password', autocomplete: 'current-password' },
  { field: 'sslMode', label: 'SSL mode', choices: SSL_MODES },
];

const KEY_FIELDS: FieldSpec[] = [
  { field: 'connection', label: 'Connection name', hint: "a connection in the server's config" },
  // A password input, so that it is not shown on screen; kept only in the page (storage.ts).
  { field: 'token', label: 'Key or token', type: 'password', hint: 'API key or JWT' },
];

const LOGIN_TABS: { id: string; method: LoginMethod; title: string }[] = [
  { id: 'login-credentials', method: 'credentials', title: 'Database credentials' },
  { id: 'login-key', method: 'key', title: 'Key or token' },
];

/** "Max rows" when left empty: with a key, the credentials' cap or the server's default. */
const MAX_ROWS_HINTS: Record<LoginMethod, string> = {
  credentials: 'per statement; empty: 100000',
  key: "empty: the key's or server's limit",
};

const RUN_FIELDS: FieldSpec[] = [
  {
    field: 'timeoutMs',
    label: 'Timeout (ms)',
    type: 'number',
    hint: 'statement timeout; empty: none',
  },
  { field: 'maxRows', label: 'Max rows', type: 'number', hint: MAX_ROWS_HINTS.credentials },
  { field: 'isolationLevel', label: 'Isolation level', choices: ISOLATION_LEVELS },
  { field: 'rowMode', label: 'JSON export rows as', choices: ROW_MODES },
  { field: 'cache', label: 'Cache', hint: "empty: off; 'on'; or a time to live in ms" },
  { field: 'params', label: 'Params', hint: 'JSON array for $1, $2, … (one statement)' },
];

const BOXES: { field: BoxField; label: string }[] = [
  { field: 'rememberPassword', label: 'Remember password (kept in this browser’s storage)' },
  { field: 'readOnly', label: 'Read only' },
  { field: 'dryRun', label: 'Dry run (roll back at the end)' },
];

export class ConnectionView {
  readonly element: HTMLElement;
  /** The connection the server offers, which the form opens on (page-connection.ts). */
  readonly offered = pageConnection();
  /** The names of the connections the server's CONFIG_FILE holds, offered in the key tab. */
  private readonly connectionNames = pageConnectionNames();
  private readonly inputs = new Map<keyof ConnectionForm, HTMLInputElement | HTMLSelectElement>();
  private readonly saved = h('ul', {
    className: 'saved',
    attrs: { 'aria-label': 'Saved connections' },
  });
  private readonly status = h('p', {
    className: 'form-status',
    attrs: { role: 'status', id: 'connection-status', 'data-testid': 'connection-status' },
  });
  private login: LoginMethod = 'credentials';
  private readonly loginTabs = tabList('Log in with', LOGIN_TABS, (id) =>
    this.chooseLogin(LOGIN_TABS.find((tab) => tab.id === id)?.method ?? 'credentials'),
  );
  private readonly loginPanels = new Map<LoginMethod, HTMLElement>();

  constructor(
    private readonly storage: ConsoleStorage,
    private readonly onChange: (form: ConnectionForm) => void,
  ) {
    const form = h(
      'form',
      { className: 'connection-form', attrs: { 'aria-label': 'Connection' } },
      [
        h('fieldset', {}, [
          h('legend', { text: 'Connection' }),
          this.input(NAME_FIELD),
          this.loginTabs.element,
          this.loginPanel('credentials', CREDENTIAL_FIELDS),
          this.loginPanel('key', KEY_FIELDS),
        ]),
        h('fieldset', {}, [
          h('legend', { text: 'Each run' }),
          ...RUN_FIELDS.map((spec) => this.input(spec)),
        ]),
        h('fieldset', { className: 'boxes' }, [
          h('legend', { text: 'Options' }),
          ...BOXES.map((box) => this.box(box.field, box.label)),
        ]),
        h('div', { className: 'toolbar' }, [
          button('Test connection', () => void this.test()),
          button('Save connection', () => this.save()),
        ]),
        this.status,
      ],
    );
    form.addEventListener('submit', (event) => event.preventDefault());
    form.addEventListener('input', (event) => this.changed(event));
    form.addEventListener('change', (event) => this.changed(event));
    this.element = h(
      'section',
      { className: 'connection', attrs: { 'aria-label': 'Connection settings' } },
      [
        form,
        h('div', { className: 'saved-connections' }, [
          h('h2', { text: 'Saved connections' }),
          this.saved,
        ]),
      ],
    );
    this.fill(withPageConnection(storage.currentForm(), this.offered));
    this.showSaved(storage.connections());
  }

  /** The form's values now. */
  value(): ConnectionForm {
    const form: Record<string, unknown> = { login: this.login };
    for (const [field, input] of this.inputs) {
      form[field] =
        input instanceof HTMLInputElement && input.type === 'checkbox'
          ? input.checked
          : input.value;
    }
    return form as unknown as ConnectionForm;
  }

  /** Clears the message of the last test or refused field. */
  clearStatus(): void {
    this.status.textContent = '';
  }

  /** Shows a field the form could not use. */
  showError(error: FormError): void {
    this.status.textContent = error.message;
    this.inputs.get(error.field)?.focus();
  }

  /**
   * Marks the fields that kept a run from reaching the database (aria-invalid, and a mark beside
   * the label), says why, and puts the cursor in the first. A field loses its mark when edited.
   */
  showProblems(fields: FormField[], message: string): void {
    this.clearProblems();
    for (const field of fields) {
      const input = this.inputs.get(field);
      input?.setAttribute('aria-invalid', 'true');
      // A screen reader reads why with the field.
      input?.setAttribute('aria-describedby', 'connection-status');
      input?.closest('.field')?.classList.add('invalid');
    }
    this.status.textContent = message;
    this.inputs.get(fields[0] as FormField)?.focus();
  }

  private clearProblems(input?: Element): void {
    const marked = input ? [input] : [...this.inputs.values()];
    for (const element of marked) {
      element.removeAttribute('aria-invalid');
      element.removeAttribute('aria-describedby');
      element.closest('.field')?.classList.remove('invalid');
    }
  }

  private fill(form: ConnectionForm): void {
    this.showLogin(form.login === 'key' ? 'key' : 'credentials');
    for (const [field, input] of this.inputs) {
      const value = form[field];
      if (input instanceof HTMLInputElement && input.type === 'checkbox')
        input.checked = value === true;
      else input.value = String(value);
    }
    this.onChange(form);
  }

  private chooseLogin(method: LoginMethod): void {
    // What was said about the other way in no longer applies.
    this.clearProblems();
    this.clearStatus();
    this.showLogin(method);
    this.changed();
  }

  private showLogin(method: LoginMethod): void {
    this.login = method;
    this.loginTabs.setSelected(LOGIN_TABS.find((tab) => tab.method === method)?.id ?? '');
    for (const [panelMethod, panel] of this.loginPanels) panel.hidden = panelMethod !== method;
    this.inputs.get('maxRows')?.setAttribute('placeholder', MAX_ROWS_HINTS[method]);
  }

  /** The fields of one way in, shown while its tab is chosen. */
  private loginPanel(method: LoginMethod, fields: FieldSpec[]): HTMLElement {
    const id = LOGIN_TABS.find((tab) => tab.method === method)?.id ?? method;
    const panel = h(
      'div',
      {
        className: 'login-panel',
        attrs: { role: 'tabpanel', id: `panel-${id}`, 'aria-labelledby': `tab-${id}` },
      },
      fields.map((spec) => this.input(spec)),
    );
    if (method === 'key') panel.append(this.connectionChoices());
    this.loginPanels.set(method, panel);
    return panel;
  }

  private changed(event?: Event): void {
    if (event?.target instanceof Element) this.clearProblems(event.target);
    const form = this.value();
    this.storage.saveCurrentForm(form);
    this.onChange(form);
  }

  /**
   * The server's named connections (names only), as buttons that fill "Connection name" and as
   * its suggestions; nothing when the server holds none.
   */
  private connectionChoices(): HTMLElement {
    const names = this.connectionNames;
    const input = this.inputs.get('connection');
    if (names.length === 0 || !input) return h('span', { attrs: { hidden: '' } });
    input.setAttribute('list', 'connection-names');
    return h(
      'div',
      {
        className: 'connection-choices',
        attrs: { role: 'group', 'aria-label': 'Connections on this server' },
      },
      [
        h('span', { text: 'On this server:' }),
        ...names.map((name) =>
          button(
            name,
            () => {
              input.value = name;
              this.clearProblems(input);
              this.changed();
            },
            { 'data-connection-name': name, 'aria-label': `Use connection ${name}` },
          ),
        ),
        h(
          'datalist',
          { attrs: { id: 'connection-names' } },
          names.map((name) => h('option', { attrs: { value: name } })),
        ),
      ],
    );
  }

  private input(spec: FieldSpec): HTMLElement {
    const id = `field-${spec.field}`;
    const input = spec.choices
      ? h(
          'select',
          { attrs: { id, name: spec.field } },
          spec.choices.map((choice) => h('option', { text: choice, attrs: { value: choice } })),
        )
      : h('input', {
          attrs: {
            id,
            name: spec.field,
            type: spec.type ?? 'text',
            autocomplete: spec.autocomplete ?? 'off',
            spellcheck: 'false',
            ...(spec.hint ? { placeholder: spec.hint } : {}),
          },
        });
    this.inputs.set(spec.field, input);
    return h('label', { className: 'field', attrs: { for: id } }, [
      h('span', { text: spec.label }),
      input,
    ]);
  }

  private box(field: BoxField, label: string): HTMLElement {
    const id = `field-${field}`;
    const input = h('input', { attrs: { id, name: field, type: 'checkbox' } });
    this.inputs.set(field, input);
    return h('label', { className: 'box', attrs: { for: id } }, [
      input,
      h('span', { text: label }),
    ]);
  }

  private async test(): Promise<void> {
    let fields: Record<string, unknown>;
    let headers: Record<string, string>;
    try {
      fields = connectionFields(this.value(), this.offered);
      headers = credentialHeaders(this.value());
    } catch (error) {
      if (error instanceof FormError) this.showError(error);
      return;
    }
    this.status.textContent = 'Testing…';
    try {
      const { status, body, retryAfter } = await postJson('api/test-connection', fields, headers);
      if (status === 200 && body.success === true) {
        this.status.textContent = `Connected: PostgreSQL ${String(body.serverVersion)}, ${body.ssl ? 'TLS' : 'no TLS'}, ${String(body.latencyMs)} ms`;
      } else {
        const error = body.error as { message?: string; code?: string } | string | undefined;
        const message =
          typeof error === 'string'
            ? error
            : `${error?.code ? `${error.code}: ` : ''}${error?.message ?? `HTTP ${status}`}`;
        const seconds = retryAfterSeconds(retryAfter ?? null);
        const wait = seconds === undefined ? '' : ` (${retryAfterText(seconds)})`;
        this.status.textContent = `Connection failed: ${message}${wait}`;
      }
    } catch (error) {
      this.status.textContent = `sqlgate could not be reached: ${String(error)}`;
    }
  }

  private save(): void {
    const form = this.value();
    this.showSaved(this.storage.saveConnection(form));
    const secret = usesKey(form)
      ? ' without its key or token'
      : form.rememberPassword
        ? ' with its password'
        : ' without its password';
    this.status.textContent = `Saved ${savedName(form)}${secret}`;
  }

  private showSaved(connections: ConnectionForm[]): void {
    this.saved.replaceChildren(
      ...connections.map((saved) => {
        const label = savedName(saved);
        return h('li', {}, [
          h('span', { className: 'saved-label', text: label }),
          h('button', {
            text: 'Use',
            attrs: { type: 'button', 'aria-label': `Use ${label}` },
            on: {
              click: () => {
                this.fill(saved);
                this.storage.saveCurrentForm(saved);
                this.status.textContent = `Using ${label}`;
              },
            },
          }),
          button('Delete', () => this.showSaved(this.storage.deleteConnection(label)), {
            'aria-label': `Delete ${label}`,
          }),
        ]);
      }),
    );
    if (connections.length === 0)
      this.saved.append(h('li', { className: 'empty', text: 'None yet' }));
  }
}
