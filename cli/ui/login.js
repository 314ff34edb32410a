// The login page's one behaviour: say so when the last attempt failed (/login?failed=1). A file
// of its own because the server's content security policy allows no inline script, and because
// it must load before login (the server lets /assets/login* through).
(function () {
  'use strict';
  if (new URLSearchParams(location.search).get('failed')) {
    const line = document.getElementById('failed');
    if (line) line.hidden = false;
  }
})();
