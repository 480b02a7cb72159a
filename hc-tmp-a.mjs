import * as c from '@sqlgate/client';
console.log(Object.keys(c));
