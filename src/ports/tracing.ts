/**
 * Tracing of calls to other services (the upstream case store, STS), as an adapter that
 * makes them sees it. Absent when tracing is off: the adapters then make their calls as
 * before, at no cost. Span names are templates (`GET /case/{crn}`), never a crn.
 */
export interface OutgoingTracing {
  /** Runs `call` inside a client span of this name, ended when it settles (an error marks it failed). */
  outgoing<T>(name: string, attributes: Readonly<Record<string, string>>, call: () => Promise<T>): Promise<T>;
  /** Writes the active trace context (`traceparent`, `tracestate`) into a call's headers. */
  inject(headers: Record<string, string>): void;
}
