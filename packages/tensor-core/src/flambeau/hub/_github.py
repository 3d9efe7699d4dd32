"""Fetching a GitHub repository (``owner/name[:ref]``) into the hub directory.

The repository is downloaded as GitHub's zipball of the ref and unpacked into
``<hub_dir>/<owner>_<name>_<ref>``, which later calls reuse. Before any code is
fetched the repository must be trusted: listed in ``<hub_dir>/trusted_list``, already
cached, owned by one of PyTorch's own organizations, or confirmed at a prompt (as
torch.hub does).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import warnings
import zipfile
from pathlib import Path
from urllib.error import HTTPError, URLError
from urllib.request import Request, urlopen

from flambeau.hub._zipfiles import safe_extract

ENV_GITHUB_TOKEN = "GITHUB_TOKEN"
# The owners torch.hub trusts without asking.
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")


def _hub():
    # Through the package, so that patching flambeau.hub.get_dir or
    # download_url_to_file (as tests of torch.hub patch torch.hub's) reaches these calls.
    from flambeau import hub

    return hub


def _git_archive_link(repo_owner: str, repo_name: str, ref: str) -> str:
    return f"https://github.com/{repo_owner}/{repo_name}/zipball/{ref}"


def _remove_if_exists(path: str) -> None:
    if os.path.isfile(path) or os.path.islink(path):
        os.remove(path)
    elif os.path.exists(path):
        shutil.rmtree(path)


def _default_branch(repo_owner: str, repo_name: str) -> str:
    """main if the repository has it, else master; offline, whichever is cached."""
    try:
        with urlopen(f"https://github.com/{repo_owner}/{repo_name}/tree/main/"):
            return "main"
    except HTTPError as e:
        if e.code == 404:
            return "master"
        raise
    except URLError as e:
        hub_dir = _hub().get_dir()
        for ref in ("main", "master"):
            if os.path.exists(os.path.join(hub_dir, f"{repo_owner}_{repo_name}_{ref}")):
                return ref
        raise RuntimeError(
            "It looks like there is no internet connection and the repo could not be "
            f"found in the cache ({hub_dir})"
        ) from e


def _parse_repo_info(github: str) -> tuple[str, str, str]:
    repo_info, _, ref = github.partition(":")
    parts = repo_info.split("/")
    if len(parts) != 2 or not all(parts) or ":" in ref:
        raise ValueError(
            f'Invalid GitHub repository "{github}": expected "repo_owner/repo_name[:ref]"'
        )
    repo_owner, repo_name = parts
    return repo_owner, repo_name, ref or _default_branch(repo_owner, repo_name)


def _read_json(url: str, headers: dict):
    with urlopen(Request(url, headers=headers)) as r:
        return json.loads(r.read().decode(r.headers.get_content_charset("utf-8")))


def _validate_not_a_forked_repo(repo_owner: str, repo_name: str, ref: str) -> None:
    """Checks, through GitHub's API, that ``ref`` is a branch, tag or commit of this
    repository rather than of a fork (GitHub serves a fork's commits under any name)."""
    headers = {"Accept": "application/vnd.github.v3+json"}
    token = os.environ.get(ENV_GITHUB_TOKEN)
    if token is not None:
        headers["Authorization"] = f"token {token}"
    for kind in ("branches", "tags"):
        page = 0
        while True:
            page += 1
            url = (
                f"https://api.github.com/repos/{repo_owner}/{repo_name}/{kind}"
                f"?per_page=100&page={page}"
            )
            try:
                response = _read_json(url, headers)
            except HTTPError:
                if "Authorization" not in headers:
                    raise
                del headers["Authorization"]  # retry: the token may lack permissions
                response = _read_json(url, headers)
            if not response:
                break
            for entry in response:
                if entry["name"] == ref or entry["commit"]["sha"].startswith(ref):
                    return
    raise ValueError(
        f"Cannot find {ref} in https://github.com/{repo_owner}/{repo_name}. If it's a commit "
        "from a forked repo, please call hub.load() with forked repo directly."
    )


def _check_repo_is_trusted(repo_owner, repo_name, owner_name_branch, trust_repo) -> None:
    hub_dir = _hub().get_dir()
    trusted_list = os.path.join(hub_dir, "trusted_list")
    Path(trusted_list).touch()
    with open(trusted_list) as f:
        trusted_repos = tuple(line.strip() for line in f)
    # A repository downloaded before the trusted list existed counts as trusted.
    cached_repos = next(os.walk(hub_dir))[1]
    owner_name = f"{repo_owner}_{repo_name}"
    is_trusted = (
        owner_name in trusted_repos
        or owner_name_branch in cached_repos
        or repo_owner in _TRUSTED_REPO_OWNERS
    )
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        response = input(
            f"The repository {owner_name} does not belong to the list of trusted repositories "
            "and as such cannot be downloaded. Do you trust this repository and wish to add "
            "it to the trusted list of repositories (y/N)?"
        )
        if response.lower() in ("y", "yes"):
            if is_trusted:
                print("The repository is already trusted.")
        elif response.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")  # noqa: TRY002 - torch.hub's type
        else:
            raise ValueError(f"Unrecognized response {response}.")
    if not is_trusted:
        with open(trusted_list, "a") as f:
            f.write(owner_name + "\n")


def _download_zipball(repo_owner, repo_name, ref, cached_file) -> None:
    hub = _hub()
    url = _git_archive_link(repo_owner, repo_name, ref)
    sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
    try:
        hub.download_url_to_file(url, cached_file, progress=False)
    except HTTPError as err:
        if err.code != 300:
            raise
        # 300 Multiple Choices: the ref names both a tag and a branch; take the branch,
        # as git does.
        warnings.warn(
            f"The ref {ref} is ambiguous. Perhaps it is both a tag and a branch in the repo? "
            "flambeau.hub will now assume that it's a branch. You can disambiguate tags and "
            "branches by explicitly passing refs/heads/branch_name or refs/tags/tag_name as "
            "the ref. That might require using skip_validation=True.",
            stacklevel=4,
        )
        url = _git_archive_link(repo_owner, repo_name, f"refs/heads/{ref}")
        hub.download_url_to_file(url, cached_file, progress=False)


def get_cache_or_reload(github, force_reload, trust_repo, verbose=True, skip_validation=False):
    """The directory of the repository ``github`` in the hub directory, downloaded
    unless cached (or when ``force_reload``)."""
    hub_dir = _hub().get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    repo_owner, repo_name, ref = _parse_repo_info(github)
    # A branch name may contain "/", which cannot be in a folder name.
    normalized_ref = ref.replace("/", "_")
    owner_name_branch = f"{repo_owner}_{repo_name}_{normalized_ref}"
    repo_dir = os.path.join(hub_dir, owner_name_branch)
    _check_repo_is_trusted(repo_owner, repo_name, owner_name_branch, trust_repo)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    if not skip_validation:
        _validate_not_a_forked_repo(repo_owner, repo_name, ref)
    cached_file = os.path.join(hub_dir, normalized_ref + ".zip")
    _remove_if_exists(cached_file)
    _download_zipball(repo_owner, repo_name, ref, cached_file)
    with zipfile.ZipFile(cached_file) as zf:
        # GitHub names the top folder <owner>-<name>-<sha>; it is renamed to repo_dir.
        top = zf.infolist()[0].filename.split("/")[0]
        extracted = os.path.join(hub_dir, top)
        _remove_if_exists(extracted)
        safe_extract(zf, hub_dir)
    _remove_if_exists(cached_file)
    if os.path.abspath(extracted) != os.path.abspath(repo_dir):
        _remove_if_exists(repo_dir)
        shutil.move(extracted, repo_dir)
    return repo_dir
