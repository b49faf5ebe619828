import {
  EncodedJson,
  encodeJson,
  encodeResponse,
  errorResponse,
  errorText,
  InternalError,
  ServerError,
  successResponse,
  type WireValue,
} from "../jsonrpc/index.js";
import type { ActiveSubscription, CometCallContext, WsSession } from "./context.js";
import { encodeEventData, encodeEventsMap } from "./encode/events.js";
import type { CometServices, EventMessage, EventQuery } from "./services.js";

/**
 * WebSocket subscriptions (docs/cometbft-rpc.md §4.1; rpc/core/events.go). Each subscription has its own pump: it
 * takes events from the bus (whose bounded buffer cancels a subscription that falls behind rather
 * than blocking the publisher) and queues them on the connection with the subscribe request's id.
 */

/** CometBFT's maxQueryLength. */
export const MAX_QUERY_LENGTH = 512;

function requireSession(ctx: CometCallContext): WsSession {
  if (ctx.ws === undefined) throw new InternalError("subscriptions are only available over WebSocket");
  return ctx.ws;
}

function parseQueryOrFail(services: CometServices, text: string): EventQuery {
  try {
    return services.parseQuery(text);
  } catch (err) {
    throw new InternalError(`failed to parse query: ${errorText(err)}`, { cause: err });
  }
}

/**
 * The subscription limits shared by subscribe and broadcast_tx_commit. A broadcast_tx_commit wait is
 * a subscription in CometBFT, so the node's tx waits (services.txWaits) count with the bus's.
 */
export function checkSubscriptionLimits(services: CometServices, ctx: CometCallContext, subscriber: string): void {
  const { maxSubscriptionClients, maxSubscriptionsPerClient } = ctx.runtime.settings;
  const { events, txWaits } = services;
  let clients = events.numClients();
  for (const owner of txWaits.owners()) if (events.numClientSubscriptions(owner) === 0) clients++;
  if (clients >= maxSubscriptionClients) {
    throw new InternalError(`max_subscription_clients ${maxSubscriptionClients} reached`);
  }
  if (events.numClientSubscriptions(subscriber) + txWaits.ownerWaits(subscriber) >= maxSubscriptionsPerClient) {
    throw new InternalError(`max_subscriptions_per_client ${maxSubscriptionsPerClient} reached`);
  }
}

/** The connection closed: nothing more is pushed (the bus subscription is released with the connection's). */
function cancelSubscription(this: ActiveSubscription): void {
  this.closedByClient = true;
}

export function subscribe(query: string, services: CometServices, ctx: CometCallContext): WireValue {
  const session = requireSession(ctx);
  checkSubscriptionLimits(services, ctx, session.remoteAddr);
  if (query.length > MAX_QUERY_LENGTH) throw new InternalError("maximum query length exceeded");
  const q = parseQueryOrFail(services, query);
  const key = q.canonical();
  if (session.subscriptions.has(key)) throw new InternalError("already subscribed");
  let subscription: ActiveSubscription["subscription"];
  try {
    subscription = services.events.subscribe(session.remoteAddr, q, {
      capacity: ctx.runtime.settings.subscriptionBufferSize,
    });
  } catch (err) {
    throw new InternalError(errorText(err), { cause: err });
  }
  const active: ActiveSubscription = { query: q, subscription, closedByClient: false, cancel: cancelSubscription };
  session.subscriptions.set(key, active);
  const id = ctx.requestId;
  session.afterReply(() => {
    void pump(session, active, key, query, id, services, ctx);
  });
  return {};
}

/**
 * An event's `data` and `events`, encoded once for every subscription it reaches: the bus hands the
 * same message object to each, and several clients (open dashboards) often hold the same query.
 */
const encodedEvents = new WeakMap<EventMessage, { data: EncodedJson; events: EncodedJson }>();

function encodedEvent(msg: EventMessage): { data: EncodedJson; events: EncodedJson } {
  let e = encodedEvents.get(msg);
  if (e === undefined) {
    e = {
      data: new EncodedJson(encodeJson(encodeEventData(msg))),
      events: new EncodedJson(encodeJson(encodeEventsMap(msg.events))),
    };
    encodedEvents.set(msg, e);
  }
  return e;
}

/** The pubsub reason when a subscriber falls behind by more than its buffer. */
export const OUT_OF_CAPACITY = "internal subscription event buffer is out of capacity";

/**
 * Moves events from the bus to the connection. A reader drains the bus into a bounded buffer at
 * once (so the publisher never waits on this client); a writer queues them on the connection. A
 * buffer overflow cancels the subscription (out of capacity), whatever the bus itself does.
 */
async function pump(
  session: WsSession,
  active: ActiveSubscription,
  key: string,
  queryText: string,
  id: CometCallContext["requestId"],
  services: CometServices,
  ctx: CometCallContext,
): Promise<void> {
  const { settings, log } = ctx.runtime;
  const buffer: EventMessage[] = [];
  let ended: { reason: string } | undefined;
  let wake: (() => void) | undefined;
  const signal = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const forget = () => {
    if (session.subscriptions.get(key) === active) session.subscriptions.delete(key);
  };
  const release = () => {
    active.closedByClient = true;
    forget();
    try {
      services.events.unsubscribe(session.remoteAddr, active.query);
    } catch (err) {
      log.debug({ err }, "releasing a subscription");
    }
  };

  const read = async () => {
    for (;;) {
      let msg: EventMessage | undefined;
      try {
        msg = await active.subscription.next();
      } catch (err) {
        log.warn({ err, query: queryText }, "subscription failed");
        msg = undefined;
      }
      if (msg === undefined) {
        ended = { reason: active.subscription.cancelled() ?? "CometBFT exited" };
        break;
      }
      if (active.closedByClient || session.isClosed()) continue;
      if (buffer.length >= settings.subscriptionBufferSize) {
        // Report the overflow even though we end the bus subscription ourselves.
        ended = { reason: OUT_OF_CAPACITY };
        release();
        active.closedByClient = false;
        break;
      }
      buffer.push(msg);
      signal();
    }
    signal();
  };
  void read();

  for (;;) {
    const msg = buffer.shift();
    if (msg === undefined) {
      if (ended !== undefined) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      continue;
    }
    if (active.closedByClient || session.isClosed()) continue;
    let result: WireValue;
    try {
      const encoded = encodedEvent(msg);
      result = { query: queryText, data: encoded.data, events: encoded.events };
    } catch (err) {
      log.error({ err, type: msg.type }, "cannot encode event");
      continue;
    }
    const queued = await session.send(encodeResponse(successResponse(id, result)), settings.subscriptionWriteWaitMs);
    if (queued || session.isClosed()) continue;
    log.info({ remote: session.remoteAddr, query: queryText }, "can't write response (slow client)");
    if (settings.closeOnSlowClient) {
      session.trySend(
        encodeResponse(errorResponse(id, new ServerError("subscription was canceled (reason: slow client)"))),
      );
      // Stop forwarding; release the bus subscription so the client's slot is freed.
      release();
      return;
    }
  }
  forget();
  if (!active.closedByClient && !session.isClosed() && ended !== undefined) {
    const sent = session.trySend(
      encodeResponse(errorResponse(id, new ServerError(`subscription was canceled (reason: ${ended.reason})`))),
    );
    if (!sent) log.info({ remote: session.remoteAddr, query: queryText }, "can't write response (slow client)");
  }
}

export function unsubscribe(query: string, services: CometServices, ctx: CometCallContext): WireValue {
  const session = requireSession(ctx);
  const q = parseQueryOrFail(services, query);
  const key = q.canonical();
  const active = session.subscriptions.get(key);
  if (active === undefined) throw new InternalError("subscription not found");
  active.closedByClient = true;
  session.subscriptions.delete(key);
  try {
    services.events.unsubscribe(session.remoteAddr, active.query);
  } catch (err) {
    throw new InternalError(errorText(err), { cause: err });
  }
  return {};
}

export function unsubscribeAll(services: CometServices, ctx: CometCallContext): WireValue {
  const session = requireSession(ctx);
  if (session.subscriptions.size === 0) throw new InternalError("subscription not found");
  for (const active of session.subscriptions.values()) active.closedByClient = true;
  session.subscriptions.clear();
  try {
    services.events.unsubscribeAll(session.remoteAddr);
  } catch (err) {
    throw new InternalError(errorText(err), { cause: err });
  }
  return {};
}

/** On disconnect CometBFT unsubscribes everything the connection's address holds. */
export function releaseSession(
  session: Pick<WsSession, "remoteAddr" | "subscriptions">,
  services: CometServices,
): void {
  for (const active of session.subscriptions.values()) active.closedByClient = true;
  session.subscriptions.clear();
  try {
    services.events.unsubscribeAll(session.remoteAddr);
  } catch {
    // Nothing subscribed: nothing to release.
  }
}
