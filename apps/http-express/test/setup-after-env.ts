/** Fails any test whose responses carried an internal message (see response-inspector.ts). */
import { takeViolations } from './response-inspector';

afterEach(() => {
  expect(takeViolations()).toEqual([]);
});
