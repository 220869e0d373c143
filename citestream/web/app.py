"""The ASGI app: static pages, a JSON API and one server-sent-events stream, over the Kafka bridge.

Pages are plain HTML shells; ``static/app.js`` fills them from the API and the
event stream with ``textContent`` only. Every route that reads a topic goes
through the bridge or the timeline reader; the only database reads are the
documents, chunks, request state and ledger (``queries``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections.abc import Callable, Iterator
from importlib.resources import files
from pathlib import Path
from string import Template
from typing import BinaryIO
from urllib.parse import unquote

import anyio
from pydantic import TypeAdapter, ValidationError
from sse_starlette.sse import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from ..streams import idle_fetch, member_id
from ..config import Settings, get_settings
from ..core.errors import RecordRejected
from ..core.regulators import ISSUERS
from ..core.strict_json import decode_json
from ..ingest.pipeline import doc_id_for
from ..store.chunks import UPLOAD
from ..models import IngestRequest, QuestionEvent
from ..models.common import RequestId
from ..store import engine_for
from . import queries, render, uploads
from .bridge import Bridge, sse_payload
from .budgets import Budgets, ClientBudgets, OverBudget, client_of
from .upload_room import UploadRoom
from .pdfwork import Busy, PdfWork, TooSlow
from .throttle import BodyTooLarge, Slots, read_capped
from .security import SecurityHeaders
from .settings import WebSettings, get_web_settings
from .timeline import Throttled, Timelines

PACKAGE = Path(str(files("citestream.web")))
# path → (page name: its file under pages/ and the nav entry it lights, title)
PAGES = {"/": ("ask", "Ask"), "/live": ("live", "Live"), "/documents": ("documents", "Documents"),
         "/cite": ("cite", "Citation"), "/request": ("request", "Request")}
SCOPES = ("MIXED", "FDA", "EMA", "ICH", "SOPS")
KEEPALIVE_S = 15
_PDF_JOBS_EACH = "this address already waits for the page images it may"
log = logging.getLogger("citestream.web")


def render_page(name: str, title: str) -> str:
    """A page: its own ``<main>`` content inside the shell every page shares (head, header and navigation)."""
    shell = Template((PACKAGE / "pages" / "_shell.html").read_text(encoding="utf-8"))
    main = (PACKAGE / "pages" / f"{name}.html").read_text(encoding="utf-8")
    return shell.substitute(title=title, page=name, main=main)


def _error(status: int, message: str, retry_after_s: float | None = None) -> JSONResponse:
    headers = {"retry-after": str(max(1, round(retry_after_s)))} if retry_after_s is not None else None
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _read_through(file: BinaryIO) -> Iterator[bytes]:
    """An open file's bytes, then the file closed (an image the cache may have removed meanwhile stays readable)."""
    with file:
        while chunk := file.read(1 << 16):
            yield chunk


def _over(exc: OverBudget) -> JSONResponse:
    return _error(429, str(exc), exc.retry_after_s)


_REQUEST_ID = TypeAdapter(RequestId)


def _valid_id(value: str) -> bool:
    try:
        _REQUEST_ID.validate_python(value)
        return True
    except ValidationError:
        return False


async def _publish(bridge: Bridge, topic: str, record) -> JSONResponse | None:
    """None once the broker acknowledged the record; otherwise the 503 to answer with."""
    try:
        await bridge.publish(topic, record)
    except Exception as exc:  # noqa: BLE001 - any client error means: not sent
        return _error(503, f"the broker did not take the record ({type(exc).__name__}); try again")
    return None


class _Stream(EventSourceResponse):
    """An event stream that gives its slot and queue back however it ends (even one never started)."""

    def __init__(self, release, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.release = release

    async def __call__(self, scope, receive, send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.release()


class _Stalled(Exception):
    """A download's client took no chunk within the deadline."""


class _Download(StreamingResponse):
    """A PDF sent in chunks from its one opened file (``render.SourceFile``), which is closed and whose download
    slots are given back however the sending ends (read through, the client gone, the file changed meanwhile, or
    a chunk its client did not take within ``deadline_s``).

    The deadline is per chunk: a live connection whose client stops reading never says it is gone, and the
    server's send waits for it to read with no end, so without one, four addresses holding downloads they never
    read kept every visitor from ``/api/pdfs`` (review after issue 54, N2)."""

    def __init__(self, source: render.SourceFile, release, headers: dict[str, str], deadline_s: float):
        super().__init__(source.chunks(), media_type="application/pdf",
                         headers={**headers, "content-length": str(source.size)})
        self.source, self.release, self.deadline_s = source, release, deadline_s

    async def stream_response(self, send) -> None:
        async def within_deadline(message) -> None:
            try:
                with anyio.fail_after(self.deadline_s):
                    await send(message)
            except TimeoutError:
                raise _Stalled from None
        try:
            await super().stream_response(within_deadline)
        except _Stalled:  # ended here: uvicorn closes the connection of a response left incomplete
            log.info("a PDF download was ended: its client took no chunk for %g s", self.deadline_s)

    async def __call__(self, scope, receive, send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.source.close()
            self.release()


def create_app(settings: Settings | None = None, web: WebSettings | None = None) -> Starlette:
    settings = settings or get_settings()
    web = web or get_web_settings()
    member_id.apply()  # the bridge's consumers are group members (docs/reliability.md)
    idle_fetch.apply(settings.broker_idle_fetch_ms / 1000)  # the bridge's consumers wait on idle topics all day
    bridge = Bridge(settings, web)
    engine = engine_for(settings.page_dsn)  # the page's role: it reads, and may change nothing
    timelines = Timelines(settings, web, engine, bridge.trust)
    streams = Slots(web.max_streams)
    downloads = Slots(web.pdf_downloads)
    budgets = Budgets(web)
    pdf_work = PdfWork(settings.pdf_workers, web.pdf_jobs, settings.pdf_wall_s + 5)
    boxes = render.KeptBoxes(web.boxes_kept)
    page_cache = settings.state_dir / "web" / "pages"
    owners = settings.state_dir / "web" / "owners"  # digests of the uploaders' secrets (``uploads.keep_owner``)
    cache_bytes = int(web.page_cache_mb * (1 << 20))
    uploads_dir = settings.uploads_dir
    room = UploadRoom(int(web.uploads_max_mb * (1 << 20)), lambda: uploads.uploads_bytes(uploads_dir))

    @contextlib.asynccontextmanager
    async def lifespan(app):
        await bridge.start()
        try:
            yield
        finally:
            await bridge.stop()
            pdf_work.close()

    def page(name: str, title: str):
        html = render_page(name, title)

        async def endpoint(request: Request) -> Response:
            return HTMLResponse(html, headers={"cache-control": "no-cache"})
        return endpoint

    async def health(request: Request) -> Response:
        return JSONResponse({"ok": True, "consumer_group": bridge.group, "connected": bridge.connected,
                             "assigned": bridge.ready.is_set(), "trust": bridge.trust_status(),
                             "streams": {"open": streams.taken, "max": streams.size},
                             "timeline_reads": timelines.started,
                             "pdf_jobs": {"now": pdf_work.jobs, "max": pdf_work.most, "started": pdf_work.started},
                             "pdf_downloads": {"open": downloads.taken, "max": downloads.size},
                             "stage_keys_dropped": bridge.keys_dropped})

    def hold(pool: Slots, request: Request, kind: str, most: int, busy: str,
             over: str) -> Callable[[], None] | Response:
        """A page-wide slot of ``pool``, then one of the ``most`` ``kind`` the visitor may hold: the function that
        gives both back, or the refusal (503 with the page full, 429 with the visitor's share taken), nothing held."""
        if not pool.take():
            return _error(503, busy, 10)
        who = client_of(request.scope)
        try:
            budgets.take(who, kind, most, over)
        except OverBudget as exc:
            pool.give_back()
            return _over(exc)

        def release() -> None:
            pool.give_back()
            budgets.give_back(who, kind)
        return release

    async def events(request: Request) -> Response:
        """One stream per browser: a snapshot of recent records first, then every record as it arrives. At most
        ``max_streams`` at once, ``max_streams_per_client`` of one client: each holds a socket and a queue of up to
        1,000 records."""
        held = hold(streams, request, "streams", web.max_streams_per_client,
                    f"{streams.size} live streams are open, the most this page serves; close another tab or try "
                    "again later", f"this address holds {web.max_streams_per_client} live streams, the most one may")
        if isinstance(held, Response):
            return held
        queue = bridge.subscribe()

        async def stream():
            yield ServerSentEvent(data=json.dumps(bridge.snapshot(), ensure_ascii=False), event="snapshot")
            while True:
                event = await queue.get()
                if event is None:  # dropped for falling behind; the browser reconnects
                    return
                yield ServerSentEvent(data=sse_payload(event), event=event.kind)

        def release() -> None:
            bridge.unsubscribe(queue)
            held()

        return _Stream(release, stream(), ping=KEEPALIVE_S, headers={"cache-control": "no-cache"})

    async def ask(request: Request) -> Response:
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return _error(415, "send the question as application/json")
        limit = int(web.question_max_kb * 1024)
        try:
            body = decode_json(await read_capped(request.headers.get("content-length"), request.stream(), limit))
        except BodyTooLarge as exc:
            return _error(413, f"the question's body is too large ({exc}); a question is at most 2,000 characters")
        except RecordRejected as exc:
            return _error(400, f"the body is not JSON a question can be read from ({exc.reason})")
        if not isinstance(body, dict):
            return _error(400, "the body must be a JSON object")
        scope = body.get("scope", "MIXED")
        if scope not in SCOPES:
            return _error(422, f"scope must be one of {', '.join(SCOPES)}")
        try:
            question = QuestionEvent(request_id=f"web-{uuid.uuid4().hex[:16]}", question=body.get("question", ""),
                                     scope=scope)
        except ValidationError as exc:
            return _error(422, "; ".join(e["msg"] for e in exc.errors()))
        if failed := await _publish(bridge, "questions", question):
            return failed
        return JSONResponse({"request_id": question.request_id, "question": question.question, "scope": scope},
                            status_code=202)

    def latest(kind: str):
        """The last record of ``kind`` the page has seen for a request (for a browser that missed the event)."""
        async def endpoint(request: Request) -> Response:
            event = bridge.latest(kind, request.path_params["request_id"])
            if event is None:
                return _error(404, "not seen yet")
            return JSONResponse(event.model_dump(mode="json"))
        return endpoint

    async def request_timeline(request: Request) -> Response:
        rid = request.path_params["request_id"]
        if not _valid_id(rid):
            return _error(422, "not a request_id")
        client = budgets.client(client_of(request.scope)).timelines
        try:
            return JSONResponse(await timelines.get(rid, client.allow))
        except Throttled as exc:
            return JSONResponse({"error": str(exc)}, status_code=429,
                                headers={"retry-after": str(max(1, round(exc.retry_after_s)))})

    async def documents(request: Request) -> Response:
        docs = await asyncio.to_thread(queries.list_documents, engine)
        return JSONResponse({"documents": [queries.public_document(d) for d in docs]})

    async def upload(request: Request) -> Response:
        """Body: the PDF's bytes; ``X-Filename``: its name (a custom header: cross-site forms cannot send it)."""
        name = request.headers.get("x-filename")
        if name is None:
            return _error(400, "missing X-Filename header")
        if wait := budgets.all_uploads.allow():
            return _error(429, "the page takes no more uploads this minute", wait)
        name = unquote(name[:uploads.MAX_FILENAME_CHARS * 3])
        await room.refresh()  # the worker removes expired uploads: measured again, uploads in flight kept
        try:
            saved = await uploads.save_upload(request.stream(), name, uploads_dir, int(web.upload_max_mb * (1 << 20)),
                                              request.headers.get("content-length"),
                                              spend=budgets.client(client_of(request.scope)).upload_bytes,
                                              room=room)
        except uploads.UploadOverBudget as exc:
            return _error(exc.status, str(exc), exc.retry_after_s)
        except uploads.UploadRejected as exc:
            return _error(exc.status, str(exc))
        ingest = IngestRequest(request_id=f"web-ingest-{uuid.uuid4().hex[:12]}", paths=[str(saved.path)])
        if failed := await _publish(bridge, "documents.ingest", ingest):
            uploads.discard(saved)
            return failed
        doc_id = doc_id_for(saved.path, UPLOAD)
        return JSONResponse({"request_id": ingest.request_id, "file": saved.path.name, "doc_id": doc_id,
                             "owner_token": uploads.keep_owner(owners, doc_id),
                             "bytes": saved.path.stat().st_size}, status_code=202)

    async def issuers(request: Request) -> Response:
        return JSONResponse({"issuers": list(ISSUERS)})

    async def correct_issuer(request: Request) -> Response:
        """Body: ``{"doc_id", "issuer", "owner_token"}``. Whoever uploaded a document (the holder of the secret its
        upload was answered with) corrects its issuer: the upload is sent to ``documents.ingest`` again with that
        issuer, which the ingest agent takes as the uploader's word (its scope stays MIXED)."""
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return _error(415, "send the correction as application/json")
        try:
            body = decode_json(await read_capped(request.headers.get("content-length"), request.stream(), 4096))
        except (BodyTooLarge, RecordRejected):
            return _error(400, "the body is not a JSON object a correction can be read from")
        if not isinstance(body, dict) or not all(isinstance(body.get(k), str)
                                                 for k in ("doc_id", "issuer", "owner_token")):
            return _error(400, "send doc_id, issuer and owner_token")
        doc = await asyncio.to_thread(queries.get_document, engine, body["doc_id"])
        if doc is None or doc.origin != UPLOAD or not uploads.is_owner(owners, doc.doc_id, body["owner_token"]):
            return _error(403, "only whoever uploaded a document may correct its issuer")
        if wait := budgets.all_uploads.allow():  # an ingest and an index version, like an upload
            return _error(429, "the page takes no more uploads or corrections this minute", wait)
        try:
            ingest = IngestRequest(request_id=f"web-issuer-{uuid.uuid4().hex[:12]}", paths=[doc.source],
                                   issuer=body["issuer"])
        except ValidationError:
            return _error(422, f"issuer must be one of {', '.join(ISSUERS)}")
        if failed := await _publish(bridge, "documents.ingest", ingest):
            return failed
        return JSONResponse({"request_id": ingest.request_id, "doc_id": doc.doc_id, "issuer": ingest.issuer},
                            status_code=202)

    async def chunk(request: Request) -> Response:
        """A cited chunk with its document, its page image and where the quoted sentence (``?quote=``, one the chunk
        holds; otherwise the whole chunk) sits on it."""
        info = await asyncio.to_thread(queries.get_chunk, engine, request.path_params["chunk_id"])
        if info is None:
            return _error(404, "no such chunk in the index (it may have been re-ingested)")
        quote = render.quoted(info.text, request.query_params.get("quote", ""))
        data = {"chunk_id": info.chunk_id, "kind": info.kind, "page": info.page, "section": info.section,
                "text": info.text, "quote": quote, "document": queries.public_document(info.document),
                "image": None, "pdf": None, "boxes": [], "unavailable": None}
        try:
            marked = quote or info.text
            found = boxes.kept(info.document, info.page, marked)
            if found is None:
                with budgets.holding(client_of(request.scope), "pdf", web.pdf_jobs_per_client, _PDF_JOBS_EACH):
                    found = await pdf_work.run(boxes.make, info.document, info.page, marked)
            data["boxes"] = [b.__dict__ for b in found]
            data["image"] = f"/api/pages/{info.document.doc_id}/{info.page}.png"
            data["pdf"] = f"/api/pdfs/{info.document.doc_id}.pdf#page={info.page}"
        except render.PageUnavailable as exc:
            data["unavailable"] = str(exc)
        except OverBudget as exc:
            return _over(exc)
        except (Busy, TooSlow) as exc:
            return _error(503 if isinstance(exc, Busy) else 504, str(exc), 10)
        return JSONResponse(data)

    async def page_image(request: Request) -> Response:
        doc = await asyncio.to_thread(queries.get_document, engine, request.path_params["doc_id"])
        if doc is None:
            return _error(404, "no such document")
        try:
            with budgets.holding(client_of(request.scope), "pdf", web.pdf_jobs_per_client, _PDF_JOBS_EACH):
                png = await pdf_work.run(render.page_png, doc, request.path_params["page"], page_cache, cache_bytes)
        except render.PageUnavailable as exc:
            return _error(404, str(exc))
        except OverBudget as exc:
            return _over(exc)
        except (Busy, TooSlow) as exc:
            return _error(503 if isinstance(exc, Busy) else 504, str(exc), 10)
        return StreamingResponse(_read_through(png), media_type="image/png",
                                 headers={"cache-control": "private, max-age=3600"})

    async def pdf_file(request: Request) -> Response:
        """The ingested PDF itself, to open at a cited page (``#page=N``): only a document's file whose bytes are
        still the ingested ones (``render.open_source``), never a path the browser names; sent in chunks, at most
        ``pdf_downloads`` at once, ``pdf_downloads_per_client`` of one client (each holds a file and a socket for as
        long as its client takes to read it)."""
        doc = await asyncio.to_thread(queries.get_document, engine, request.path_params["doc_id"])
        if doc is None:
            return _error(404, "no such document")
        release = hold(downloads, request, "downloads", web.pdf_downloads_per_client,
                       f"{downloads.size} PDFs are being sent, the most this page sends at once; try again shortly",
                       f"this address downloads {web.pdf_downloads_per_client} PDFs, the most one may at once")
        if isinstance(release, Response):
            return release
        try:
            source = await asyncio.to_thread(render.open_source, doc)
        except render.PageUnavailable as exc:
            release()
            return _error(404, str(exc))
        except BaseException:  # an I/O error while the file is checked, or the request cancelled meanwhile
            release()
            raise
        name = "".join(c for c in doc.pdf if c.isalnum() or c in "._-") or "document.pdf"
        return _Download(source, release, headers={"content-disposition": f'inline; filename="{name}"',
                                                   "cache-control": "private, max-age=3600"},
                         deadline_s=web.pdf_send_deadline_s)

    routes: list[BaseRoute] = [Route(path, page(name, title)) for path, (name, title) in PAGES.items()]
    routes += [
        Route("/healthz", health),
        Route("/api/events", events),
        Route("/api/questions", ask, methods=["POST"]),
        Route("/api/answers/{request_id:str}", latest("answer")),
        Route("/api/requests/{request_id:str}", request_timeline),
        Route("/api/documents", documents),
        Route("/api/documents", upload, methods=["POST"]),
        Route("/api/documents/issuer", correct_issuer, methods=["POST"]),
        Route("/api/issuers", issuers),
        Route("/api/ingests/{request_id:str}", latest("ingested")),
        Route("/api/chunks/{chunk_id:str}", chunk),
        Route("/api/pages/{doc_id:str}/{page:int}.png", page_image),
        Route("/api/pdfs/{doc_id:str}.pdf", pdf_file),
        Mount("/static", StaticFiles(directory=PACKAGE / "static"), name="static"),
    ]
    middleware = [Middleware(SecurityHeaders), Middleware(TrustedHostMiddleware, allowed_hosts=web.host_list()),
                  Middleware(ClientBudgets, budgets=budgets)]
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    app.state.bridge = bridge
    return app
