"""flambeau.hub: torch.hub's API with flambeau's cache directory, without the network.

Repositories are local directories (source="local") or zips served by a patched
download_url_to_file; URLs are file:// URLs. The last test runs the same calls through
torch.hub and compares the outcomes.
"""

import hashlib
import os
import sys
import zipfile

import pytest

import flambeau
import flambeau.hub as hub
from flambeau.hub import _dirs, _github

TESTS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TESTS)
from torch_checkpoints import EXPECTED, fixture, values  # noqa: E402

HUBCONF = """
import helper_module  # a module next to hubconf.py

dependencies = ["os"]

def model(n, scale=1):
    "Builds the test model."
    return {"n": n, "scale": scale, "helper": helper_module.VALUE}

def _private():
    pass

not_callable = 3
"""


@pytest.fixture(autouse=True)
def hub_dir(tmp_path, monkeypatch):
    """A fresh hub directory per test; set_dir's choice is undone afterwards, and the
    test repositories' helper_module is imported afresh (Python caches modules)."""
    monkeypatch.setattr(_dirs, "_hub_dir", None)
    monkeypatch.setenv("FLAMBEAU_HOME", str(tmp_path / "home"))
    sys.modules.pop("helper_module", None)
    yield tmp_path / "home" / "hub"
    sys.modules.pop("helper_module", None)


def write_repo(root, hubconf=HUBCONF):
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "hubconf.py"), "w") as f:
        f.write(hubconf)
    with open(os.path.join(root, "helper_module.py"), "w") as f:
        f.write("VALUE = 'helped'\n")
    return root


class ZipballServer:
    """Stands in for GitHub: download_url_to_file writes a zipball of a local repo."""

    def __init__(self, monkeypatch, hubconf=HUBCONF, top="owner-repo-0123abc"):
        self.urls = []
        self.hubconf = hubconf
        self.top = top
        self.status = None  # an HTTP status to fail the next download with
        monkeypatch.setattr(hub, "download_url_to_file", self.download)

    def download(self, url, dst, hash_prefix=None, progress=True):
        self.urls.append(url)
        if self.status is not None:
            status, self.status = self.status, None
            from urllib.error import HTTPError

            raise HTTPError(url, status, "Multiple Choices", {}, None)
        with zipfile.ZipFile(dst, "w") as zf:
            zf.writestr(f"{self.top}/", "")
            zf.writestr(f"{self.top}/hubconf.py", self.hubconf)
            zf.writestr(f"{self.top}/helper_module.py", "VALUE = 'zipped'\n")


# -- the hub directory -------------------------------------------------------------


def test_get_dir_resolution(monkeypatch, tmp_path):
    monkeypatch.setenv("FLAMBEAU_HOME", "~/fl")
    assert hub.get_dir() == os.path.join(os.path.expanduser("~/fl"), "hub")
    monkeypatch.delenv("FLAMBEAU_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hub.get_dir() == str(tmp_path / "xdg" / "flambeau" / "hub")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert hub.get_dir() == str(tmp_path / "user" / ".cache" / "flambeau" / "hub")
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))  # torch's cache is not used
    assert hub.get_dir() == str(tmp_path / "user" / ".cache" / "flambeau" / "hub")
    hub.set_dir(tmp_path / "chosen")  # a PathLike, kept as a str
    monkeypatch.setenv("FLAMBEAU_HOME", "/elsewhere")
    assert hub.get_dir() == str(tmp_path / "chosen")
    hub.set_dir("~/models")
    assert hub.get_dir() == os.path.join(str(tmp_path / "user"), "models")


# -- downloads -----------------------------------------------------------------------


def test_download_url_to_file_with_hash(tmp_path):
    src = tmp_path / "blob.bin"
    src.write_bytes(b"x" * 300_000)  # several chunks
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    dst = tmp_path / "out" / "blob.bin"
    dst.parent.mkdir()
    hub.download_url_to_file(src.as_uri(), str(dst), hash_prefix=digest[:10], progress=False)
    assert dst.read_bytes() == src.read_bytes()
    bad = tmp_path / "out" / "bad.bin"
    with pytest.raises(
        RuntimeError, match=f'invalid hash value \\(expected "0000", got "{digest}"'
    ):
        hub.download_url_to_file(src.as_uri(), str(bad), hash_prefix="0000", progress=False)
    assert sorted(os.listdir(dst.parent)) == ["blob.bin"]  # no dst, no .partial left


def test_download_progress_goes_to_stderr(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # the bar flambeau draws without tqdm
    src = tmp_path / "blob.bin"
    src.write_bytes(b"y" * 10)
    hub.download_url_to_file(src.as_uri(), str(tmp_path / "copy.bin"))
    assert "100.0%" in capsys.readouterr().err


def test_load_state_dict_from_url_caches_in_checkpoints(tmp_path, hub_dir, monkeypatch, capsys):
    src = tmp_path / "weights.pt"
    flambeau.save({"w": flambeau.arange(3.0)}, src)
    state = hub.load_state_dict_from_url(src.as_uri(), progress=False)
    assert flambeau.equal(state["w"], flambeau.arange(3.0))
    cached = hub_dir / "checkpoints" / "weights.pt"
    assert cached.exists()
    assert f'Downloading: "{src.as_uri()}" to {cached}' in capsys.readouterr().out
    calls = []
    real = hub.download_url_to_file
    monkeypatch.setattr(
        hub, "download_url_to_file", lambda *a, **k: calls.append(a) or real(*a, **k)
    )
    src.unlink()  # a second call reads the cache and downloads nothing
    again = hub.load_state_dict_from_url(src.as_uri(), progress=False)
    assert flambeau.equal(again["w"], state["w"]) and calls == []
    assert capsys.readouterr().out == ""


def test_load_state_dict_from_url_file_name_model_dir_map_location(tmp_path):
    src = tmp_path / "download"
    flambeau.save({"w": flambeau.ones(2)}, src)
    model_dir = tmp_path / "models"
    state = hub.load_state_dict_from_url(
        src.as_uri(), model_dir=str(model_dir), file_name="named.pt", map_location="cpu",
        progress=False, weights_only=True,
    )  # fmt: skip
    assert (model_dir / "named.pt").exists() and state["w"].device.type == "cpu"


def test_load_state_dict_from_url_checks_the_hash_in_the_name(tmp_path):
    blob = tmp_path / "blob"
    flambeau.save({"w": flambeau.ones(1)}, blob)
    digest = hashlib.sha256(blob.read_bytes()).hexdigest()
    good = tmp_path / f"resnet-{digest[:8]}.pt"
    good.write_bytes(blob.read_bytes())
    state = hub.load_state_dict_from_url(good.as_uri(), check_hash=True, progress=False)
    assert flambeau.equal(state["w"], flambeau.ones(1))
    bad = tmp_path / "resnet-deadbeef.pt"
    bad.write_bytes(blob.read_bytes())
    with pytest.raises(RuntimeError, match="invalid hash value"):
        hub.load_state_dict_from_url(bad.as_uri(), check_hash=True, progress=False)
    assert not os.path.exists(os.path.join(hub.get_dir(), "checkpoints", bad.name))
    # Without check_hash the name's hash is not checked.
    hub.load_state_dict_from_url(bad.as_uri(), progress=False)


def test_load_state_dict_from_url_reads_torch_checkpoints_and_legacy_zips(tmp_path):
    state = hub.load_state_dict_from_url(
        "file://" + fixture("torch_state_dict.pt"), progress=False, weights_only=True
    )
    assert len(state) == 9
    for name, tensor in state.items():
        assert (values(tensor) == EXPECTED[f"state_dict.{name}"]).all()
    # The legacy format: a checkpoint zipped by hand, one file in the zip.
    inner = tmp_path / "inner.pt"
    flambeau.save({"w": flambeau.full((2,), 7.0)}, inner)
    zipped = tmp_path / "legacy.zip"
    with zipfile.ZipFile(zipped, "w") as zf:
        zf.write(inner, "model_weights.pt")
    with pytest.warns(FutureWarning, match="Falling back to the old format"):
        state = hub.load_state_dict_from_url(zipped.as_uri(), progress=False)
    assert flambeau.equal(state["w"], flambeau.full((2,), 7.0))
    assert os.path.exists(os.path.join(hub.get_dir(), "checkpoints", "model_weights.pt"))


# -- hubconf.py ----------------------------------------------------------------------


def test_load_local_calls_the_entry_point(tmp_path):
    repo = write_repo(str(tmp_path / "repo"))
    path_before = list(sys.path)
    got = hub.load(repo, "model", 4, source="local", scale=2)
    assert got == {"n": 4, "scale": 2, "helper": "helped"}
    assert sys.path == path_before
    assert hub.load(tmp_path / "repo", "model", 1, source="LOCAL")["n"] == 1


def test_load_errors(tmp_path):
    repo = write_repo(str(tmp_path / "repo"))
    with pytest.raises(
        ValueError, match='Unknown source: "svn". Allowed values: "github" | "local".'
    ):
        hub.load(repo, "model", source="svn")
    with pytest.raises(RuntimeError, match="Cannot find callable missing in hubconf"):
        hub.load(repo, "missing", source="local")
    with pytest.raises(RuntimeError, match="Cannot find callable not_callable in hubconf"):
        hub.load(repo, "not_callable", source="local")
    with pytest.raises(ValueError, match="model should be a string of function name"):
        hub.load(repo, 3, source="local")


def test_missing_dependencies_are_listed(tmp_path):
    hubconf = "dependencies = ['os', 'no_such_module_a', 'no_such_module_b']\ndef m():\n    pass\n"
    repo = write_repo(str(tmp_path / "repo"), hubconf)
    with pytest.raises(
        RuntimeError, match="^Missing dependencies: no_such_module_a, no_such_module_b$"
    ):
        hub.load(repo, "m", source="local")


# -- GitHub repositories ---------------------------------------------------------------


def test_load_from_github_downloads_once_then_uses_the_cache(monkeypatch, hub_dir, capsys):
    server = ZipballServer(monkeypatch)
    got = hub.load("owner/repo:v1.0", "model", 2, trust_repo=True, skip_validation=True)
    assert got == {"n": 2, "scale": 1, "helper": "zipped"}
    assert server.urls == ["https://github.com/owner/repo/zipball/v1.0"]
    repo_dir = hub_dir / "owner_repo_v1.0"
    assert (repo_dir / "hubconf.py").exists()
    assert sorted(os.listdir(hub_dir)) == ["owner_repo_v1.0", "trusted_list"]  # zip removed
    assert (hub_dir / "trusted_list").read_text() == "owner_repo\n"
    assert "Downloading" in capsys.readouterr().out
    hub.load("owner/repo:v1.0", "model", 3, skip_validation=True)  # cached, trusted: no prompt
    assert len(server.urls) == 1
    assert f"Using cache found in {repo_dir}" in capsys.readouterr().err
    hub.load("owner/repo:v1.0", "model", 3, verbose=False)
    assert capsys.readouterr().err == ""
    hub.load("owner/repo:v1.0", "model", 3, force_reload=True, skip_validation=True)
    assert len(server.urls) == 2


def test_list_and_help_from_github(monkeypatch):
    ZipballServer(monkeypatch)
    entry_points = hub.list("owner/repo:feature/x", trust_repo=True, skip_validation=True)
    assert entry_points == ["model"]  # imported modules and _names are not entry points
    assert os.path.isdir(os.path.join(hub.get_dir(), "owner_repo_feature_x"))
    doc = hub.help("owner/repo:feature/x", "model", skip_validation=True)
    assert doc == "Builds the test model."


def test_trust_prompt(monkeypatch, hub_dir, capsys):
    ZipballServer(monkeypatch)
    answers = []
    monkeypatch.setattr("builtins.input", lambda prompt: answers.pop(0))
    answers.append("n")
    with pytest.raises(Exception, match="Untrusted repository."):
        hub.load("stranger/repo:main", "model", 1, skip_validation=True)
    answers.append("maybe")
    with pytest.raises(ValueError, match="Unrecognized response maybe."):
        hub.load("stranger/repo:main", "model", 1, skip_validation=True)
    answers.append("")
    with pytest.raises(Exception, match="Untrusted repository."):
        hub.load("stranger/repo:main", "model", 1, trust_repo=False, skip_validation=True)
    answers.append("yes")
    hub.load("stranger/repo:main", "model", 1, skip_validation=True)
    assert (hub_dir / "trusted_list").read_text() == "stranger_repo\n"
    hub.load("stranger/repo:main", "model", 1)  # now trusted: no prompt (answers is empty)
    answers.append("y")  # trust_repo=False always asks
    hub.load("stranger/repo:main", "model", 1, trust_repo=False)
    assert "The repository is already trusted." in capsys.readouterr().out
    hub.load("pytorch/vision:main", "model", 1, skip_validation=True)  # a trusted owner:
    assert (hub_dir / "trusted_list").read_text() == "stranger_repo\n"  # not listed


def test_validation_against_the_github_api(monkeypatch):
    ZipballServer(monkeypatch)
    pages = {
        "branches": [[{"name": "main", "commit": {"sha": "aaaa1111"}}], []],
        "tags": [[{"name": "v2", "commit": {"sha": "bbbb2222"}}], []],
    }
    seen = []

    def read_json(url, headers):
        seen.append(url)
        kind = url.split("/")[-1].split("?")[0]
        page = int(url.rsplit("page=", 1)[1])
        return pages[kind][page - 1]

    monkeypatch.setattr(_github, "_read_json", read_json)
    hub.load("owner/repo:v2", "model", 1, trust_repo=True)
    hub.load("owner/repo:bbbb22", "model", 1, trust_repo=True)  # a commit prefix
    assert seen[0] == "https://api.github.com/repos/owner/repo/branches?per_page=100&page=1"
    with pytest.raises(ValueError, match="Cannot find forked in https://github.com/owner/repo"):
        hub.load("owner/repo:forked", "model", 1, trust_repo=True)


def test_default_branch_and_offline_cache(monkeypatch):
    from urllib.error import HTTPError, URLError

    server = ZipballServer(monkeypatch)

    def no_main(url):
        raise HTTPError(url, 404, "Not Found", {}, None)

    monkeypatch.setattr(_github, "urlopen", no_main)
    hub.load("owner/repo", "model", 1, trust_repo=True, skip_validation=True)
    assert server.urls[-1] == "https://github.com/owner/repo/zipball/master"

    def offline(url):
        raise URLError("no network")

    monkeypatch.setattr(_github, "urlopen", offline)
    assert hub.load("owner/repo", "model", 5, trust_repo=True)["n"] == 5  # the cached master
    with pytest.raises(RuntimeError, match="no internet connection"):
        hub.load("owner/other", "model", 1, trust_repo=True)


def test_ambiguous_ref_falls_back_to_the_branch(monkeypatch):
    server = ZipballServer(monkeypatch)
    server.status = 300
    with pytest.warns(UserWarning, match="The ref v1 is ambiguous"):
        hub.load("owner/repo:v1", "model", 1, trust_repo=True, skip_validation=True)
    assert server.urls[-1] == "https://github.com/owner/repo/zipball/refs/heads/v1"


def test_bad_repository_names(monkeypatch):
    ZipballServer(monkeypatch)
    for name in ("owner", "a/b/c:main", "owner/repo:x:y", "/repo:main"):
        with pytest.raises(ValueError, match="repo_owner/repo_name"):
            hub.load(name, "model", trust_repo=True, skip_validation=True)


@pytest.mark.parametrize("entry", ["../evil.py", "/abs/evil.py", "top/../../evil.py"])
def test_zip_entries_cannot_escape_the_hub_dir(monkeypatch, hub_dir, entry):
    server = ZipballServer(monkeypatch)

    def download(url, dst, hash_prefix=None, progress=True):
        with zipfile.ZipFile(dst, "w") as zf:
            zf.writestr("top/hubconf.py", "")
            zf.writestr(entry, "")

    monkeypatch.setattr(hub, "download_url_to_file", download)
    del server
    with pytest.raises(ValueError, match="Archive entry"):
        hub.load("owner/repo:main", "model", trust_repo=True, skip_validation=True)
    assert not (hub_dir.parent / "evil.py").exists()


# -- against torch.hub -----------------------------------------------------------------


def _outcomes(module, hub_dir, repo, bad_deps, checkpoint_url):
    """What a sequence of calls of a torch.hub-like module returns or raises."""
    module.set_dir(hub_dir)
    calls = (
        lambda: module.load(repo, "model", 1, source="local"),
        lambda: module.load(repo, "nope", source="local"),
        lambda: module.load(repo, "model", source="ftp"),
        lambda: module.load(bad_deps, "m", source="local"),
        lambda: module.load_state_dict_from_url(checkpoint_url, progress=False)["w"].tolist(),
        lambda: module.load_state_dict_from_url(
            checkpoint_url, check_hash=True, file_name="w-00.pt", progress=False
        ),
        lambda: module.get_dir() == hub_dir,
    )
    got = []
    for call in calls:
        try:
            got.append(call())
        except Exception as e:
            got.append((type(e).__name__, str(e)[:40]))
    sys.modules.pop("helper_module", None)
    return got


def test_same_outcomes_as_torch_hub(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    repo = write_repo(str(tmp_path / "repo"))
    bad_deps = write_repo(
        str(tmp_path / "bad"), "dependencies = ['no_such_mod']\ndef m():\n    pass\n"
    )
    src = tmp_path / "w.pt"
    torch.save({"w": torch.arange(4.0)}, src)
    monkeypatch.setattr(torch.hub, "_hub_dir", None)  # undoes set_dir
    args = (repo, bad_deps, src.as_uri())
    want = _outcomes(torch.hub, str(tmp_path / "torch_hub"), *args)
    got = _outcomes(hub, str(tmp_path / "flambeau_hub"), *args)
    assert got == want
    assert got[0] == {"n": 1, "scale": 1, "helper": "helped"}
    assert hub.HASH_REGEX.pattern == torch.hub.HASH_REGEX.pattern
    assert hub.READ_DATA_CHUNK == torch.hub.READ_DATA_CHUNK
