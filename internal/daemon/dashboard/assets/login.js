// The login page: keep the session's anti-CSRF token in this origin's
// storage, then leave the page so its one-time URL is not in the history.
'use strict';
(function () {
  const meta = document.querySelector('meta[name="flinkgo-csrf"]');
  try {
    localStorage.setItem('flinkgo.csrf', meta ? meta.content : '');
  } catch (e) {
    document.getElementById('status').textContent =
      'This browser keeps no local storage for this page, so the dashboard stays read-only.';
    return;
  }
  location.replace('/');
})();
