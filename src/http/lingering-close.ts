import type { IncomingMessage } from 'node:http';

/** How long, at most, the rest of a refused body is read after the answer (nginx's `lingering_time`). */
export const LINGER_MS = 30_000;
/** How long the client may send nothing before the connection is closed anyway (nginx's `lingering_timeout`). */
export const LINGER_IDLE_MS = 5_000;

/**
 * Closes the connection of a request answered before its body was read whole (a body refused as too
 * large with 413, part-way or by its Content-Length) the way nginx's lingering close does. Node
 * would destroy the socket as soon as the answer is written (`Connection: close`), with the
 * client's bytes still arriving: the kernel then resets the connection, and a client still sending
 * sees EPIPE or ECONNRESET instead of the answer, about half the time. Instead, once the answer is
 * written, the sending side is closed (the client reads the answer, then end of stream) and the
 * rest of the body is read and discarded until the client stops sending or closes — for at most
 * `LINGER_MS` in all and `LINGER_IDLE_MS` of silence — and only then is the socket destroyed.
 * Call it when deciding to answer such a request; the answer must say `Connection: close`.
 */
export function closeLingering(request: IncomingMessage, limits = { totalMs: LINGER_MS, idleMs: LINGER_IDLE_MS }): void {
  const socket = request.socket;
  if (socket.destroyed || (socket as { lingering?: boolean }).lingering) return;
  (socket as { lingering?: boolean }).lingering = true;
  // Node's server calls destroySoon() on the socket once an answer with `Connection: close` is
  // written (after the answer's own 'finish' listeners); this socket lingers instead.
  socket.destroySoon = () => {
    // The client stopped sending: destroyed once the answer is flushed; out of time: at once.
    const stop = () => (socket.writableFinished ? expire() : socket.once('finish', expire));
    const expire = () => {
      clearTimeout(total);
      clearTimeout(idle);
      socket.destroy();
    };
    const total = setTimeout(expire, limits.totalMs);
    const idle = setTimeout(expire, limits.idleMs);
    total.unref();
    idle.unref();
    socket.once('close', () => {
      clearTimeout(total);
      clearTimeout(idle);
    });
    // The answer is flushed, then end of stream: the client has its answer whatever it does next.
    socket.end();
    // Whoever was reading the body (a parser that gave up) no longer is: its bytes are discarded.
    request.unpipe();
    request.removeAllListeners('data');
    request.on('data', () => idle.refresh());
    if (request.complete) stop();
    else request.once('end', stop);
    request.resume();
    // The client closed its side, or the body ended: nothing more arrives, so nothing is reset.
    socket.once('end', stop);
  };
}
